#!/usr/bin/env node
// resume-experiments.mjs — what survives a resume? Applies one transformation at a time to copies
// of corpus sessions, resumes each copy in the real CLI through the resume probes, and reports
// what the agent sent compared with the untouched baseline and with the reference model
// (scripts/resume-reference.mjs). Findings are summarised in docs/resume-model.md.
//
//   node scripts/resume-experiments.mjs [--out DIR] [--jobs N] [--only REGEX] [--json]
//
// Default out: /tmp/resume-exp. Needs ../shared (corpus, probes, gen-claude-session.mjs) and the
// CLIs (scripts/install-agent-clis.sh). Run from the project root (gpt-tokenizer for o200k).
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reconstructClaude, normalizeClaudeRequest, compareClaude, reconstructCodex, compareCodex, normalizeCodexRequest } from './resume-reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const shared = resolve(root, '../shared');
const S = join(shared, 'corpus/sessions');
const argv = process.argv.slice(2);
let out = '/tmp/resume-exp', jobs = 4, only, asJson = false;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--out') out = resolve(argv[++i]);
  else if (argv[i] === '--jobs') jobs = Number(argv[++i]);
  else if (argv[i] === '--only') only = argv[++i];
  else if (argv[i] === '--json') asJson = true;
}
mkdirSync(out, { recursive: true });

let bins = { CLAUDE_BIN: process.env.CLAUDE_BIN, CODEX_BIN: process.env.CODEX_BIN };
if (!bins.CLAUDE_BIN || !bins.CODEX_BIN) {
  const txt = execFileSync(join(here, 'install-agent-clis.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const l of txt.split('\n')) { const m = /^(CLAUDE_BIN|CODEX_BIN)=(.*)$/.exec(l); if (m) bins[m[1]] ||= m[2]; }
}

// ───────────── bases ─────────────
const synthetic = join(out, 'synthetic-images.jsonl');
if (!existsSync(synthetic)) {
  execFileSync(process.execPath, [join(shared, 'tools/gen-claude-session.mjs'), '--turns', '12', '--seed', '3', '--images', 'on', '--edge-cases', 'thinking,sidechain,redo', '--out', synthetic]);
}
const BASES = {
  A: join(S, 'claude-code/drmaciver/coverage-test-fix.jsonl'),
  B: join(S, 'claude-code/hillview/projects/-home-jenkins-Personal-AI-Infrastructure/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl'),
  C: join(S, 'claude-code/smartagent/projects/-Users-pretor-Documents-PAI---TPOS/24a90d02-9724-4548-9f4f-97bcb9f93ef3.jsonl'),
  D: join(S, 'claude-code/smartagent/projects/-Users-pretor-Documents-PAI---TPOS/351b5d6c-e802-4339-a2c5-33f48865d8bd.jsonl'),
  I: synthetic,
  S: join(S, 'claude-code/aforge/projects/-root/a8117384-8a7e-445b-9af0-ab182dd62c51/subagents/agent-a2d804e54437fc4c6.jsonl'),
  X: join(S, 'codex/usereq/sessions/2025/12/15/rollout-2025-12-15T14-40-50-019b223e-0dc7-7f72-94d5-2a5a495afaef.jsonl'),
  Y: join(S, 'codex/neurodata/sessions/2025/09/29/rollout-2025-09-29T13-09-19-01999469-65fd-7fa2-ab93-d24bb4c714cb.jsonl'),
  // sessions in the wild (issue 22)
  P: join(S, 'claude-code/austinweitao__claude-backup/projects/-home-cwtrocks-android-avd/sessions/c6455dae-26cd-4ba2-a2b9-7b8e4675e19c.jsonl'),
  Q: join(S, 'claude-code/austinweitao__claude-backup/projects/-home-cwtrocks-android-avd/sessions/3e89eb15-32e7-43f8-8734-8d47310263ea.jsonl'),
  L: join(S, 'claude-code/leejunha781__Codex/.claude/projects/C--Users-namma--claude/12cd7dd6-343f-4812-bb4d-7a35d72cc817.jsonl'),
  O: join(S, 'claude-code/4thehalibit__omarchy-backup/.claude/projects/-home-vwestberg-Claude/512f6c74-f82f-4adb-9719-4ae90076677c.jsonl'),
  F: join(S, 'codex/7567491__Feishu_ClaudeCode/.codex/sessions/2025/11/27/rollout-2025-11-27T11-34-23-019ac360-5c21-7a01-8840-7a5de9d3da2a.jsonl'),
  G: join(S, 'codex/7567491__Feishu_ClaudeCode/.codex/sessions/2025/11/28/rollout-2025-11-28T22-33-42-019acae2-56c7-73c2-a045-02820622bdaa.jsonl'),
  V: join(S, 'codex/LAF-US__IDAHO-VAULT/.codex/sessions/2026/04/19/rollout-2026-04-19T22-04-58-019da910-1d2d-7883-b552-6e3adf8a4ed9.jsonl'),
};

// A session as editable rows; untouched rows are written back byte for byte.
function load(path) {
  return readFileSync(path, 'utf8').split('\n').filter(l => l !== '').map((raw, i) => {
    let obj; try { obj = JSON.parse(raw); } catch { obj = undefined; }
    return { n: i + 1, raw, obj, dirty: false };
  });
}
const dump = rows => rows.map(r => (r.dirty ? JSON.stringify(r.obj) : r.raw)).join('\n') + '\n';
const touch = (r, f) => { f(r.obj); r.dirty = true; };
const blocks = m => (Array.isArray(m?.content) ? m.content : []);
const stub = s => `[ctxvm: ${typeof s === 'string' ? s.length : JSON.stringify(s).length} chars paged out, sha256:0123456789ab]`;
/** Remove rows matching pred; children of a removed row are re-parented to its parent. */
function removeRelinked(rows, pred) {
  const parentOf = new Map();
  for (const r of rows) if (r.obj?.uuid && pred(r)) parentOf.set(r.obj.uuid, r.obj.parentUuid ?? null);
  const resolveP = p => { const seen = new Set(); while (p && parentOf.has(p) && !seen.has(p)) { seen.add(p); p = parentOf.get(p); } return p; };
  const kept = rows.filter(r => !pred(r));
  for (const r of kept) if (r.obj?.parentUuid && parentOf.has(r.obj.parentUuid)) touch(r, o => { o.parentUuid = resolveP(o.parentUuid); });
  return kept;
}
const row = (rows, n) => rows.find(r => r.n === n);
const iso = (t, ms) => new Date(Date.parse(t) + ms).toISOString();

// ───────────── experiments ─────────────
const E = [];
const claude = (name, base, what, f) => E.push({ name, base, agent: 'claude', what, f });
const codex = (name, base, what, f) => E.push({ name, base, agent: 'codex', what, f });

for (const b of ['A', 'B', 'C', 'D', 'I', 'P', 'Q', 'L', 'O']) claude(`${b}-baseline`, b, 'unmodified copy', rows => rows);
claude('A-tool-result-stub-string', 'A', 'every tool_result.content → short stub string', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'tool_result') touch(r, () => { k.content = stub(k.content); }); return rows; });
claude('A-tool-result-stub-blocks', 'A', 'every tool_result.content → [{type:text, text:stub}]', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'tool_result') touch(r, () => { k.content = [{ type: 'text', text: stub(k.content) }]; }); return rows; });
claude('A-tool-result-empty-string', 'A', 'every tool_result.content → ""', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'tool_result') touch(r, () => { k.content = ''; }); return rows; });
claude('A-tool-result-empty-array', 'A', 'every tool_result.content → []', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'tool_result') touch(r, () => { k.content = []; }); return rows; });
claude('A-user-content-empty-array', 'A', 'line 5 (tool_result XPe2ea) message.content → []', rows => { touch(row(rows, 5), o => { o.message.content = []; }); return rows; });
claude('A-assistant-content-empty-array', 'A', 'line 3 (assistant text part of a split reply) message.content → []', rows => { touch(row(rows, 3), o => { o.message.content = []; }); return rows; });
claude('A-assistant-only-message-empty', 'A', 'line 38 (final assistant text, own message.id) message.content → []', rows => { touch(row(rows, 38), o => { o.message.content = []; }); return rows; });
claude('A-assistant-mid-message-empty', 'A', 'line 15 (assistant "Done", own message.id, mid-session) message.content → []', rows => { touch(row(rows, 15), o => { o.message.content = []; }); return rows; });
claude('A-assistant-text-empty-string', 'A', 'line 3 text block → ""', rows => { touch(row(rows, 3), o => { o.message.content[0].text = ''; }); return rows; });
claude('A-drop-toolUseResult', 'A', 'delete every top-level toolUseResult', rows => { for (const r of rows) if (r.obj && 'toolUseResult' in r.obj) touch(r, o => { delete o.toolUseResult; }); return rows; });
claude('I-drop-toolUseResult', 'I', 'delete every top-level toolUseResult', rows => { for (const r of rows) if (r.obj && 'toolUseResult' in r.obj) touch(r, o => { delete o.toolUseResult; }); return rows; });
claude('A-drop-tool-result-relinked', 'A', 'remove line 5 (only result of tool_use XPe2ea); child re-parented', rows => removeRelinked(rows, r => r.n === 5));
claude('A-drop-tool-result-unlinked', 'A', 'remove line 5; child keeps a dangling parentUuid', rows => rows.filter(r => r.n !== 5));
claude('A-drop-tool-result-unlinked-far', 'A', 'remove line 5, dangling parent, and shift later timestamps +1h (no 5 s timestamp bridge)', rows => { const t0 = row(rows, 5).obj.timestamp; for (const r of rows) if (r.obj?.timestamp && r.obj.timestamp > t0) touch(r, o => { o.timestamp = iso(o.timestamp, 3600e3); }); return rows.filter(r => r.n !== 5); });
claude('A-drop-tool-use-relinked', 'A', 'remove line 4 (tool_use XPe2ea); its result becomes an orphan', rows => removeRelinked(rows, r => r.n === 4));
claude('A-drop-split-text-relinked', 'A', 'remove line 3 (text part of split reply fSakiA), relinked', rows => removeRelinked(rows, r => r.n === 3));
claude('A-drop-isMeta-relinked', 'A', 'remove line 16 (isMeta stop-hook feedback), relinked: two assistant replies become adjacent', rows => removeRelinked(rows, r => r.n === 16));
claude('A-isMeta-empty-string', 'A', 'line 16 (isMeta user) content → ""', rows => { touch(row(rows, 16), o => { o.message.content = ''; }); return rows; });
claude('A-swap-parallel-results', 'A', 'swap lines 8 and 9 (parallel results; the off-chain one now comes last in the file)', rows => { const i = rows.findIndex(r => r.n === 8); [rows[i], rows[i + 1]] = [rows[i + 1], rows[i]]; return rows; });
claude('A-branch-older-ts-last-in-file', 'A', 'append a 2-line branch forked at line 15, timestamps 1 min after line 15 (older than line 38)', rows => branch(rows, 15, 60e3, 'end'));
claude('A-branch-newer-ts-mid-file', 'A', 'insert a 2-line branch forked at line 15 right after line 15, timestamps 1 day later than everything', rows => branch(rows, 15, 86400e3, 'after'));
claude('A-sidechain-tail', 'A', 'append 2 inline sidechain lines (isSidechain:true) at the end of the file', rows => { const last = rows.at(-1).obj; const u1 = crypto.randomUUID(), u2 = crypto.randomUUID(); rows.push({ raw: JSON.stringify({ ...last, parentUuid: null, isSidechain: true, type: 'user', uuid: u1, message: { role: 'user', content: 'SIDECHAIN PROMPT' }, timestamp: iso(last.timestamp, 1000) }) }, { raw: JSON.stringify({ ...last, parentUuid: u1, isSidechain: true, uuid: u2, message: { ...last.message, id: 'msg_side', content: [{ type: 'text', text: 'SIDECHAIN REPLY' }] }, timestamp: iso(last.timestamp, 2000) }) }); return rows; });
claude('A-summary-leaf-earlier', 'A', 'append {type:"summary", leafUuid: line 15} (a title pointing at an earlier message)', rows => { rows.push({ raw: JSON.stringify({ type: 'summary', summary: 'Title', leafUuid: row(rows, 15).obj.uuid }) }); return rows; });
claude('A-last-prompt-line', 'A', 'append {type:"last-prompt", lastPrompt, sessionId}', rows => { rows.push({ raw: JSON.stringify({ type: 'last-prompt', lastPrompt: 'Add a function', sessionId: row(rows, 2).obj.sessionId }) }); return rows; });
claude('A-duplicate-line', 'A', 'append an exact copy of line 10 (same uuid) at the end', rows => { rows.push({ raw: row(rows, 10).raw }); return rows; });
claude('A-torn-last-line', 'A', 'append a truncated JSON line', rows => { rows.push({ raw: rows.at(-1).raw.slice(0, 120) }); return rows; });
claude('A-garbage-line-mid', 'A', 'insert a non-JSON line after line 10', rows => { const i = rows.findIndex(r => r.n === 10); rows.splice(i + 1, 0, { raw: 'this is not json' }); return rows; });
claude('A-strip-assistant-metadata', 'A', 'delete message.usage/model/stop_reason, requestId from assistant lines', rows => { for (const r of rows) if (r.obj?.type === 'assistant') touch(r, o => { delete o.requestId; delete o.message.usage; delete o.message.model; delete o.message.stop_reason; }); return rows; });
claude('B-drop-metadata-lines', 'B', 'remove every line that is not user/assistant/system (snapshots, summaries, queue ops…)', rows => rows.filter(r => ['user', 'assistant', 'system'].includes(r.obj?.type)));
claude('I-drop-metadata-lines', 'I', 'remove progress, file-history-snapshot, summary, queue-operation, permission-mode lines (unlinked)', rows => rows.filter(r => ['user', 'assistant', 'system'].includes(r.obj?.type)));
claude('B-drop-system-relinked', 'B', 'remove system (stop_hook_summary) lines, children re-parented', rows => removeRelinked(rows, r => r.obj?.type === 'system'));
claude('B-drop-system-unlinked', 'B', 'remove system lines, children keep dangling parentUuid', rows => rows.filter(r => r.obj?.type !== 'system'));
claude('B-drop-thinking-lines-relinked', 'B', 'remove thinking-only assistant lines, relinked', rows => removeRelinked(rows, r => r.obj?.type === 'assistant' && blocks(r.obj.message).length > 0 && blocks(r.obj.message).every(k => k.type === 'thinking')));
claude('B-thinking-signature-stripped', 'B', 'delete signature from every thinking block', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'thinking') touch(r, () => { delete k.signature; }); return rows; });
claude('B-thinking-to-text-stub', 'B', 'replace each thinking block by a text stub', rows => { for (const r of rows) { const c = blocks(r.obj?.message); c.forEach((k, i) => { if (k.type === 'thinking') touch(r, () => { c[i] = { type: 'text', text: stub(k.thinking) }; }); }); } return rows; });
claude('B-thinking-emptied', 'B', 'thinking text → "" (signature kept)', rows => { for (const r of rows) for (const k of blocks(r.obj?.message)) if (k.type === 'thinking') touch(r, () => { k.thinking = ''; }); return rows; });
claude('B-merge-split-lines', 'B', 'merge the split lines of each assistant message.id into its last line (relinked)', rows => mergeSplit(rows));
claude('B-merge-split-drop-thinking', 'B', 'merge split lines, then drop thinking blocks from the merged content', rows => { rows = mergeSplit(rows); for (const r of rows) if (r.obj?.type === 'assistant') touch(r, o => { o.message.content = o.message.content.filter(k => k.type !== 'thinking'); }); return rows; });
claude('I-image-to-text', 'I', 'replace every image block inside message content by a text stub', rows => { for (const r of rows) { const walk = arr => arr.forEach((k, i) => { if (k.type === 'image') touch(r, () => { arr[i] = { type: 'text', text: `[image ${k.source?.media_type} ${k.source?.data?.length ?? 0} b64 chars paged out]` }; }); else if (k.type === 'tool_result' && Array.isArray(k.content)) walk(k.content); }); walk(blocks(r.obj?.message)); } return rows; });
claude('I-drop-sidechain-lines', 'I', 'remove inline isSidechain lines', rows => rows.filter(r => r.obj?.isSidechain !== true));
claude('I-drop-progress-relinked', 'I', 'remove progress lines, relinked', rows => removeRelinked(rows, r => r.obj?.type === 'progress'));
claude('C-boundary-parent-linked', 'C', 'compact_boundary parentUuid := logicalParentUuid (no longer a root)', rows => { for (const r of rows) if (r.obj?.subtype === 'compact_boundary') touch(r, o => { o.parentUuid = o.logicalParentUuid; }); return rows; });
claude('C-drop-boundary', 'C', 'remove the compact_boundary; summary re-parented to logicalParentUuid', rows => { const b = rows.find(r => r.obj?.subtype === 'compact_boundary'); for (const r of rows) if (r.obj?.parentUuid === b.obj.uuid) touch(r, o => { o.parentUuid = b.obj.logicalParentUuid; }); return rows.filter(r => r !== b); });
claude('C-preserved-segment', 'C', 'compactMetadata.preservedSegment {headUuid: line 343, tailUuid: line 345, anchorUuid: summary (line 347)}', rows => { const h = row(rows, 343).obj.uuid, t = row(rows, 345).obj.uuid, a = row(rows, 347).obj.uuid; touch(rows.find(r => r.obj?.subtype === 'compact_boundary'), o => { o.compactMetadata.preservedSegment = { headUuid: h, tailUuid: t, anchorUuid: a }; }); return rows; });
claude('C-preserved-messages', 'C', 'compactMetadata.preservedMessages {uuids: lines 343-345, anchorUuid: summary (line 347)}', rows => { const u = [343, 344, 345].map(n => row(rows, n).obj.uuid), a = row(rows, 347).obj.uuid; touch(rows.find(r => r.obj?.subtype === 'compact_boundary'), o => { o.compactMetadata.preservedMessages = { uuids: u, anchorUuid: a }; }); return rows; });
claude('C-drop-pre-boundary', 'C', 'delete every line before the compact_boundary', rows => rows.slice(rows.findIndex(r => r.obj?.subtype === 'compact_boundary')));
claude('S-subagent-as-main', 'S', 'subagent transcript with isSidechain:false on every line (parallel calls whose 4th tool_use was written after the 1st result, lines 15-23)', rows => { for (const r of rows) if (r.obj?.isSidechain) touch(r, o => { o.isSidechain = false; }); return rows; });
claude('D-drop-trailing-local-command', 'D', 'remove the final /exit local-command user lines (177-179)', rows => rows.filter(r => r.n < 177));

const isOut = p => /_call_output$/.test(p?.type ?? '');
for (const b of ['X', 'Y']) codex(`${b}-baseline`, b, 'unmodified copy', rows => rows);
for (const b of ['X', 'Y']) codex(`${b}-output-stub`, b, 'every *_call_output.output → short stub string', rows => { for (const r of rows) if (r.obj?.type === 'response_item' && isOut(r.obj.payload)) touch(r, o => { o.payload.output = stub(o.payload.output); }); return rows; });
for (const b of ['X', 'Y']) codex(`${b}-drop-reasoning`, b, 'remove reasoning response_items', rows => rows.filter(r => !(r.obj?.type === 'response_item' && r.obj.payload?.type === 'reasoning')));
for (const b of ['X', 'Y']) codex(`${b}-drop-event-msg`, b, 'remove every event_msg line', rows => rows.filter(r => r.obj?.type !== 'event_msg'));
codex('X-drop-turn-context', 'X', 'remove every turn_context line', rows => rows.filter(r => r.obj?.type !== 'turn_context'));
codex('X-drop-ghost-snapshot', 'X', 'remove ghost_snapshot items', rows => rows.filter(r => r.obj?.payload?.type !== 'ghost_snapshot'));
codex('X-reasoning-no-encrypted', 'X', 'delete encrypted_content from reasoning items', rows => { for (const r of rows) if (r.obj?.payload?.type === 'reasoning') touch(r, o => { delete o.payload.encrypted_content; }); return rows; });
codex('X-reasoning-summary-emptied', 'X', 'reasoning summary → [] (encrypted_content kept)', rows => { for (const r of rows) if (r.obj?.payload?.type === 'reasoning') touch(r, o => { o.payload.summary = []; }); return rows; });
codex('Y-drop-one-output', 'Y', 'remove the first function_call_output', rows => { const i = rows.findIndex(r => r.obj?.payload?.type === 'function_call_output'); rows.splice(i, 1); return rows; });
codex('Y-drop-one-call', 'Y', 'remove the first function_call (its output becomes an orphan)', rows => { const i = rows.findIndex(r => r.obj?.payload?.type === 'function_call'); rows.splice(i, 1); return rows; });
codex('Y-compacted-message', 'Y', 'insert {type:"compacted", payload:{message}} after the 40th line', rows => { rows.splice(40, 0, { raw: JSON.stringify({ timestamp: rows[39].obj.timestamp, type: 'compacted', payload: { message: 'CTXVM SUMMARY OF EARLIER WORK' } }) }); return rows; });
codex('Y-compacted-replacement', 'Y', 'insert a compacted line with replacement_history [user, assistant] after the 40th line', rows => { rows.splice(40, 0, { raw: JSON.stringify({ timestamp: rows[39].obj.timestamp, type: 'compacted', payload: { message: 'CTXVM SUMMARY', replacement_history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'REPLACEMENT USER' }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'REPLACEMENT ASSISTANT' }] }] } }) }); return rows; });
codex('Y-huge-output', 'Y', 'first function_call_output.output → 400 000 chars', rows => { const r = rows.find(r => r.obj?.payload?.type === 'function_call_output'); touch(r, o => { o.payload.output = 'x'.repeat(199990) + '\nMIDDLE\n' + 'y'.repeat(200000); }); return rows; });
codex('Y-thread-rolled-back', 'Y', 'append event_msg {type:"thread_rolled_back", num_turns:1}', rows => { rows.push({ raw: JSON.stringify({ timestamp: rows.at(-1).obj.timestamp, type: 'event_msg', payload: { type: 'thread_rolled_back', num_turns: 1 } }) }); return rows; });

// ───────────── sessions in the wild (issue 22): models, thinking, attachments, API errors ─────────────
const setModel = (rows, pred, model) => { for (const r of rows) if (r.obj?.type === 'assistant' && r.obj.message?.model !== '<synthetic>' && pred(r)) touch(r, o => { o.message.model = model; }); return rows; };
/** Inserts `obj` (a line of the session) after line n, parented to it; line n's children are re-parented to it. */
function insertAfter(rows, n, make) {
  const at = rows.findIndex(r => r.n === n), prev = rows[at].obj;
  const uuid = crypto.randomUUID();
  const obj = { parentUuid: prev.uuid, isSidechain: false, userType: prev.userType, cwd: prev.cwd, sessionId: prev.sessionId, version: prev.version, uuid, timestamp: iso(prev.timestamp, 1), ...make(prev) };
  for (const r of rows) if (r.obj?.parentUuid === prev.uuid) touch(r, o => { o.parentUuid = uuid; });
  rows.splice(at + 1, 0, { raw: JSON.stringify(obj), obj });
  return rows;
}
const attachment = attachment => () => ({ type: 'attachment', attachment });
claude('W-B-all-model-retired', 'B', 'every assistant message.model → claude-opus-4-1-20250805 (retired in 2.1.328)', rows => setModel(rows, () => true, 'claude-opus-4-1-20250805'));
claude('W-B-all-model-sonnet45', 'B', 'every assistant message.model → claude-sonnet-4-5-20250929 (known, not the model that signed the thinking)', rows => setModel(rows, () => true, 'claude-sonnet-4-5-20250929'));
claude('W-B-mid-model-sonnet45', 'B', 'reply 7NYUKX (lines 12-14, thinking+text+tool_use) message.model → claude-sonnet-4-5-20250929; the last reply stays opus-4-5', rows => setModel(rows, r => r.n >= 12 && r.n <= 14, 'claude-sonnet-4-5-20250929'));
claude('W-B-last-model-sonnet45', 'B', 'the last reply (lines 30-31) message.model → claude-sonnet-4-5-20250929: the session resumes with sonnet-4-5', rows => setModel(rows, r => r.n >= 30, 'claude-sonnet-4-5-20250929'));
claude('W-D-model-opus48', 'D', 'every assistant message.model → claude-opus-4-8 (the file ends with /exit local-command lines)', rows => setModel(rows, () => true, 'claude-opus-4-8'));
claude('W-P-model-opus45', 'P', 'every assistant message.model → claude-opus-4-5-20251101 (c6455dae ends with /exit local-command lines)', rows => setModel(rows, () => true, 'claude-opus-4-5-20251101'));
claude('W-Q-model-opus45', 'Q', 'every assistant message.model → claude-opus-4-5-20251101 (hook_* and skill_listing attachments, user-role reminders)', rows => setModel(rows, () => true, 'claude-opus-4-5-20251101'));
claude('W-L-model-opus45', 'L', 'every assistant message.model → claude-opus-4-5-20251101 (file, deferred_tools_delta, mcp_instructions_delta attachments, user-role reminders)', rows => setModel(rows, () => true, 'claude-opus-4-5-20251101'));
claude('W-O-drop-attachments-relinked', 'O', 'remove every attachment line, children re-parented', rows => removeRelinked(rows, r => r.obj?.type === 'attachment'));
claude('W-A-skill-listing-after-prompt', 'A', 'insert a skill_listing attachment after line 2 (the first prompt)', rows => insertAfter(rows, 2, attachment({ type: 'skill_listing', content: '- ctxvm-probe: a probe skill', skillCount: 1, isInitial: true })));
claude('W-A-hook-context-after-result', 'A', 'insert a hook_additional_context attachment after line 5 (a tool_result with string content)', rows => insertAfter(rows, 5, attachment({ type: 'hook_additional_context', content: ['CTXVM HOOK CONTEXT'], hookName: 'PostToolUse', toolUseID: 'toolu_0173gGuN8G4FkjzEPrXPe2ea', hookEvent: 'PostToolUse' })));
claude('W-A-hook-context-after-array-result', 'A', 'line 5 tool_result content → [text block], then a hook_additional_context attachment after it', rows => { touch(row(rows, 5), o => { o.message.content[0].content = [{ type: 'text', text: 'RESULT AS BLOCK' }]; }); return insertAfter(rows, 5, attachment({ type: 'hook_additional_context', content: ['CTXVM HOOK CONTEXT'], hookName: 'PostToolUse', toolUseID: 'toolu_0173gGuN8G4FkjzEPrXPe2ea', hookEvent: 'PostToolUse' })); });
claude('W-A-hook-success-after-prompt', 'A', 'insert hook_success (UserPromptSubmit) and hook_system_message attachments after line 2', rows => { insertAfter(rows, 2, attachment({ type: 'hook_system_message', content: 'CTXVM SYSTEM MESSAGE', hookName: 'UserPromptSubmit', hookEvent: 'UserPromptSubmit', toolUseID: 'x' })); return insertAfter(rows, 2, attachment({ type: 'hook_success', content: 'CTXVM HOOK OUTPUT', hookName: 'UserPromptSubmit', hookEvent: 'UserPromptSubmit', toolUseID: 'x', exitCode: 0, command: 'echo', durationMs: 1 })); });
claude('W-A-unknown-attachment', 'A', 'insert an attachment of an unknown type after line 2', rows => insertAfter(rows, 2, attachment({ type: 'ctxvm_unknown_kind', content: 'CTXVM UNKNOWN ATTACHMENT' })));
claude('W-A-tool-reference', 'A', 'line 5 tool_result content → [{type:tool_reference, tool_name:Read}]', rows => { touch(row(rows, 5), o => { o.message.content[0].content = [{ type: 'tool_reference', tool_name: 'Read' }]; }); return rows; });
claude('W-A-api-error-between-prompts', 'A', 'after line 2 insert an API-error reply and a second prompt "CTXVM AFTER API ERROR"', rows => { insertAfter(rows, 2, () => ({ type: 'user', message: { role: 'user', content: 'CTXVM AFTER API ERROR' } })); return insertAfter(rows, 2, (p) => ({ type: 'assistant', isApiErrorMessage: true, message: { id: 'msg_api_error', model: '<synthetic>', role: 'assistant', type: 'message', content: [{ type: 'text', text: 'API Error: 500 overloaded' }], stop_reason: 'stop_sequence' } })); });
claude('W-A-orphan-first-result', 'A', 'delete lines 2-4 (the prompt and the call): the file starts with the tool_result of line 5, its parent and tool_use missing', rows => rows.filter(r => r.n < 2 || r.n > 4));
claude('W-Q-dangling-parent-root', 'Q', 'line 61 (its parentUuid names no line) → parentUuid null', rows => { touch(row(rows, 61), o => { o.parentUuid = null; }); return rows; });
claude('W-Q-drop-unreachable', 'Q', 'delete the lines with a uuid before line 61 (unreachable from the leaf)', rows => rows.filter(r => r.n >= 61 || !r.obj?.uuid));
claude('W-B-strip-model', 'B', 'delete message.model from every assistant line (resumes with the default model)', rows => { for (const r of rows) if (r.obj?.type === 'assistant') touch(r, o => { delete o.message.model; }); return rows; });
/** Appends user lines with these contents after the last line that has a uuid, chained. */
function appendUserLines(rows, items) {
  let prev = [...rows].reverse().find(r => r.obj?.uuid).obj;
  for (const { content, isMeta } of items) {
    const obj = { parentUuid: prev.uuid, isSidechain: false, userType: prev.userType, cwd: prev.cwd, sessionId: prev.sessionId, version: prev.version, type: 'user', message: { role: 'user', content }, ...(isMeta ? { isMeta: true } : {}), uuid: crypto.randomUUID(), timestamp: iso(prev.timestamp, 1000) };
    rows.push({ raw: JSON.stringify(obj), obj });
    prev = obj;
  }
  return rows;
}
const exitRecord = caveat => [{ content: caveat, isMeta: true }, { content: '<command-name>/exit</command-name>\n            <command-message>exit</command-message>\n            <command-args></command-args>' }, { content: '<local-command-stdout>Bye!</local-command-stdout>' }];
claude('W-A-exit-record-tagged', 'A', 'append an /exit record whose caveat is the tagged <local-command-caveat> form (2.1.x)', rows => appendUserLines(rows, exitRecord('<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>')));
claude('W-A-exit-record-untagged', 'A', 'append an /exit record whose caveat is the untagged "Caveat: ..." form (2.0.x)', rows => appendUserLines(rows, exitRecord('Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.')));
codex('Z-F-provider-openai', 'F', 'session_meta.payload.model_provider "codex" → "openai"', rows => { touch(rows[0], o => { o.payload.model_provider = 'openai'; }); return rows; });
codex('Z-G-provider-openai', 'G', 'session_meta.payload.model_provider "codex" → "openai"', rows => { touch(rows[0], o => { o.payload.model_provider = 'openai'; }); return rows; });
for (const provider of ['ollama', 'lmstudio', 'oss', 'amazon-bedrock', 'azure']) codex(`Z-F-provider-${provider}`, 'F', `session_meta.payload.model_provider "codex" → "${provider}"`, rows => { touch(rows[0], o => { o.payload.model_provider = provider; }); return rows; });
codex('Z-F-provider-missing', 'F', 'delete session_meta.payload.model_provider', rows => { touch(rows[0], o => { delete o.payload.model_provider; }); return rows; });
codex('Z-V-provider-openai', 'V', 'session_meta.payload.model_provider "ollama-launch" → "openai"', rows => { touch(rows[0], o => { o.payload.model_provider = 'openai'; }); return rows; });

function branch(rows, forkAt, deltaMs, where) {
  const fork = row(rows, forkAt).obj;
  const tmplU = rows.find(r => r.obj?.type === 'user' && typeof r.obj.message?.content === 'string').obj;
  const tmplA = rows.find(r => r.obj?.type === 'assistant').obj;
  const u1 = crypto.randomUUID(), u2 = crypto.randomUUID();
  const a = { raw: JSON.stringify({ ...tmplU, parentUuid: fork.uuid, uuid: u1, isMeta: undefined, message: { role: 'user', content: 'BRANCH PROMPT' }, timestamp: iso(fork.timestamp, deltaMs) }) };
  const b = { raw: JSON.stringify({ ...tmplA, parentUuid: u1, uuid: u2, message: { ...tmplA.message, id: 'msg_branch', content: [{ type: 'text', text: 'BRANCH REPLY' }] }, timestamp: iso(fork.timestamp, deltaMs + 1000) }) };
  if (where === 'end') rows.push(a, b);
  else rows.splice(rows.findIndex(r => r.n === forkAt) + 1, 0, a, b);
  return rows;
}
function mergeSplit(rows) {
  const groups = new Map();
  for (const r of rows) if (r.obj?.type === 'assistant' && r.obj.message?.id) { const g = groups.get(r.obj.message.id) ?? []; g.push(r); groups.set(r.obj.message.id, g); }
  const drop = new Set();
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    const last = g.at(-1);
    touch(last, o => { o.message.content = g.flatMap(r => r.obj.message.content); o.parentUuid = g[0].obj.parentUuid; });
    for (const r of g.slice(0, -1)) drop.add(r.obj.uuid);
  }
  return removeRelinked(rows, r => drop.has(r.obj?.uuid));
}

// ───────────── run ─────────────
function probe(agent, file, reqFile) {
  const tool = join(shared, 'tools', agent === 'codex' ? 'codex-resume-probe.mjs' : 'claude-resume-probe.mjs');
  const args = [tool, file, agent === 'codex' ? '--codex' : '--claude', agent === 'codex' ? bins.CODEX_BIN : bins.CLAUDE_BIN, '--json', '--keep-request', reqFile];
  const t0 = Date.now();
  return new Promise(res => {
    const c = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let so = '';
    c.stdout.on('data', d => (so += d)); c.stderr.on('data', () => {});
    c.on('close', code => { let r; try { r = JSON.parse(so); } catch { r = { ok: false, error: 'no JSON from probe' }; } res({ ...r, probeExitCode: code, elapsedMs: Date.now() - t0 }); });
  });
}

const claudeSummary = m => `${m.role}:${(typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content).map(k => k.type === 'text' ? 'text(' + k.text.slice(0, 24).replace(/\s+/g, ' ') + ')' : k.type === 'tool_use' ? 'tool_use(' + k.id.slice(-6) + ')' : k.type === 'tool_result' ? 'tool_result(' + k.tool_use_id.slice(-6) + (typeof k.content === 'string' ? ':' + k.content.slice(0, 16) : '') + ')' : k.type).join(',')}`;
const codexSummary = it => `${it.type}${it.role ? ':' + it.role : ''}${it.call_id ? '(' + it.call_id.slice(-6) + ')' : ''}${typeof it.output === 'string' ? '[' + it.output.length + ']' : ''}`;
function lcsDiff(a, b) {
  const n = a.length, m = b.length, dp = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const d = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { i++; j++; }
    else if (j < m && (i >= n || dp[i][j + 1] >= dp[i + 1][j])) d.push(`+${j}:${b[j++]}`);
    else d.push(`-${i}:${a[i++]}`);
  }
  return d;
}
function sent(agent, file, reqFile) {
  if (!existsSync(reqFile)) return null;
  const body = JSON.parse(readFileSync(reqFile, 'utf8'));
  const text = readFileSync(file, 'utf8');
  if (agent === 'codex') { const h = normalizeCodexRequest(body, reconstructCodex(text)); return body.input.map(codexSummary); }
  return normalizeClaudeRequest(body, text).messages.map(claudeSummary);
}

const todo = E.filter(e => !only || new RegExp(only).test(e.name));
const results = [];
let next = 0;
await Promise.all(Array.from({ length: jobs }, async () => {
  while (next < todo.length) {
    const e = todo[next++];
    const file = join(out, e.name + '.jsonl'), reqFile = join(out, e.name + '.request.json');
    writeFileSync(file, dump(e.f(load(BASES[e.base]))));
    const r = await probe(e.agent, file, reqFile);
    writeFileSync(join(out, e.name + '.probe.json'), JSON.stringify(r, null, 2));
    let ref;
    try { ref = existsSync(reqFile) ? (e.agent === 'codex' ? compareCodex : compareClaude)(readFileSync(file, 'utf8'), JSON.parse(readFileSync(reqFile, 'utf8'))) : undefined; } catch (err) { ref = { match: false, error: String(err) }; }
    results.push({ ...e, f: undefined, file, exit: r.claudeExitCode ?? r.codexExitCode ?? null, requestSent: existsSync(reqFile), error: r.error, output: r.output, sentCount: r.messages ?? r.items, findings: r.findings, elapsedMs: r.elapsedMs, referenceMatch: ref?.match ?? null, referenceExact: ref?.exact, referenceDiffs: ref?.diffs?.slice(0, 3) });
    process.stderr.write(`${(r.elapsedMs / 1000).toFixed(1).padStart(5)}s ${e.name}\n`);
  }
}));
// diffs against each base's baseline
for (const r of results) {
  const base = results.find(x => x.name === `${r.base}-baseline`);
  if (!base || base === r || !r.requestSent || !base.requestSent) continue;
  r.vsBaseline = lcsDiff(sent(base.agent, base.file, join(out, base.name + '.request.json')), sent(r.agent, r.file, join(out, r.name + '.request.json')));
}
results.sort((a, b) => E.indexOf(E.find(x => x.name === a.name)) - E.indexOf(E.find(x => x.name === b.name)));
writeFileSync(join(out, 'results.json'), JSON.stringify(results, null, 2));
if (asJson) console.log(JSON.stringify(results, null, 2));
else for (const r of results) {
  console.log(`\n## ${r.name} — ${r.what}`);
  console.log(`   exit ${r.exit} sent=${r.requestSent} count=${r.sentCount ?? '-'} findings=${JSON.stringify(r.findings ?? [])} reference=${r.referenceMatch}${r.error ? ' error=' + r.error + ' ' + (r.output ?? '').trim().slice(0, 200) : ''}`);
  for (const d of (r.vsBaseline ?? []).slice(0, 14)) console.log('   ' + d);
  if ((r.vsBaseline ?? []).length > 14) console.log(`   … ${r.vsBaseline.length - 14} more`);
  if (r.referenceMatch === false) console.log('   reference diff: ' + JSON.stringify(r.referenceDiffs).slice(0, 600));
}
