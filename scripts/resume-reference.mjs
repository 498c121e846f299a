#!/usr/bin/env node
// resume-reference.mjs — executable form of docs/resume-model.md: a small, dependency-free
// reference reconstruction of what Claude Code 2.1.328 / Codex CLI 0.169.0 send to the model when
// a session file is resumed, plus a comparator against the real request bodies recorded by the
// resume probes (scripts/probe-corpus.mjs --keep-request).
//
//   node scripts/resume-reference.mjs compare SESSION.jsonl REQUEST.json [--verbose]
//   node scripts/resume-reference.mjs check-all [DIR]     # every <name>.request.json under DIR
//                                                         # (default /tmp/probe-ground-truth)
//   node scripts/resume-reference.mjs reconstruct SESSION.jsonl   # print the reference context
//   node scripts/resume-reference.mjs table [DIR]         # the per-session table of the doc
//
// Also importable (reconstructClaude, compareClaude, reconstructCodex, compareCodex, …) so tests
// can compare ctxvm's output with a recorded request.
//
// It is a test oracle, not product code: ctxvm's own reconstruction (src/session/*/context.ts) should
// agree with it, and both should agree with the real CLIs. Exit 0 when every comparison matches.
//
// "Injected" material that the agent adds on resume and that a reconstruction of the *file* must
// not contain is stripped from the recorded request before comparing (see normalize*Request).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// ───────────────────────────── Claude Code ─────────────────────────────

export const CLAUDE_INTERRUPTED_TOOL_RESULT =
  "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";
export const CLAUDE_NO_RESPONSE = 'No response requested.';
export const CLAUDE_NO_CONTENT = '(no content)';
// Tool names that Claude Code 2.1.328 renames when it sends an old transcript.
const CLAUDE_TOOL_RENAMES = { Task: 'Agent' };

/** Parse JSONL text into [{line (1-based), value}] skipping blank and unparseable lines. */
export function parseJsonl(text) {
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    try { out.push({ line: i + 1, value: JSON.parse(lines[i]) }); } catch { /* torn line: ignored */ }
  }
  return out;
}

const isMsg = e => e.type === 'user' || e.type === 'assistant';
const blocksOf = c => (typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c : []);
const isApiError = e => e.type === 'assistant' && e.isApiErrorMessage === true;

/**
 * Claude Code: entries that survive the last compact_boundary. Everything before the last
 * boundary in FILE order is discarded (whatever the parent links say), except the messages named
 * by compactMetadata.preservedMessages.uuids or by the preservedSegment walk (tailUuid up to
 * headUuid); those are re-parented as a chain under anchorUuid, and the anchor's other children
 * are re-parented under the last preserved message.
 */
export function claudeLiveEntries(entries) {
  let b = -1;
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].value?.type === 'system' && entries[i].value.subtype === 'compact_boundary') { b = i; break; }
  if (b < 0) return entries;
  const meta = entries[b].value.compactMetadata ?? {};
  const byUuid = new Map();
  for (const en of entries) if (typeof en.value?.uuid === 'string') byUuid.set(en.value.uuid, en);
  let preserved;
  if (meta.preservedMessages?.uuids) preserved = { anchor: meta.preservedMessages.anchorUuid, uuids: meta.preservedMessages.uuids };
  else if (meta.preservedSegment) {
    const seg = meta.preservedSegment, uuids = [], seen = new Set();
    let cur = byUuid.get(seg.tailUuid);
    while (cur && !seen.has(cur.value.uuid)) {
      seen.add(cur.value.uuid); uuids.push(cur.value.uuid);
      if (cur.value.uuid === seg.headUuid) { preserved = { anchor: seg.anchorUuid, uuids: uuids.reverse() }; break; }
      cur = cur.value.parentUuid ? byUuid.get(cur.value.parentUuid) : undefined;
    }
  }
  if (preserved && preserved.uuids.some(u => !byUuid.has(u))) preserved = undefined;
  const keep = new Set(preserved?.uuids ?? []);
  const out = entries.filter((en, i) => i >= b || keep.has(en.value?.uuid)).map(en => ({ ...en, value: { ...en.value } }));
  if (preserved) {
    const { anchor, uuids } = preserved;
    const first = uuids[0], last = uuids.at(-1);
    const pos = new Map(uuids.map((u, i) => [u, i]));
    for (const en of out) {
      const u = en.value.uuid;
      if (pos.has(u)) en.value.parentUuid = pos.get(u) === 0 ? anchor : uuids[pos.get(u) - 1];
      else if (en.value.parentUuid === anchor && u !== first) en.value.parentUuid = last;
    }
  }
  return out;
}

const TIMESTAMP_BRIDGE_MS = 5000;
/**
 * Claude Code: the chain Claude Code loads on resume.
 * Leaf = the last (file order) non-sidechain entry that carries a uuid, walked up to its nearest
 * user/assistant ancestor. Chain = parentUuid walk from there to a null parent. A parentUuid that
 * names no loaded entry is bridged to the newest not-yet-visited entry of the same side whose
 * timestamp is <= the child's and at most 5 s older (Claude Code's "timestamp fallback");
 * otherwise the walk ends there.
 */
export function claudeChain(allEntries) {
  // Claude Code keys entries by uuid in a Map: a repeated uuid keeps its FIRST position in file
  // order while the later line's content replaces the earlier one.
  const pos = new Map(), deduped = [];
  for (const en of allEntries) {
    const u = en.value?.uuid;
    if (typeof u === 'string' && pos.has(u)) { deduped[pos.get(u)] = { ...en, line: deduped[pos.get(u)].line }; continue; }
    if (typeof u === 'string') pos.set(u, deduped.length);
    deduped.push(en);
  }
  const entries = claudeLiveEntries(deduped);
  const byUuid = new Map();
  for (const en of entries) if (en.value && typeof en.value.uuid === 'string') byUuid.set(en.value.uuid, en);
  let leaf;
  for (let i = entries.length - 1; i >= 0 && !leaf; i--) {
    const v = entries[i].value;
    if (typeof v?.uuid !== 'string' || v.isSidechain === true) continue;
    let cur = entries[i];
    const seen = new Set();
    while (cur && !isMsg(cur.value) && !seen.has(cur.value.uuid)) {
      seen.add(cur.value.uuid);
      cur = cur.value.parentUuid ? byUuid.get(cur.value.parentUuid) : undefined;
    }
    if (cur) leaf = cur;
  }
  const chain = [];
  const seen = new Set();
  const bridge = child => {
    const t = Date.parse(child.value.timestamp);
    if (Number.isNaN(t)) return undefined;
    let best, bestT = -Infinity;
    for (const en of entries) {
      const v = en.value;
      if (typeof v?.uuid !== 'string' || seen.has(v.uuid) || (v.isSidechain ?? false) !== (child.value.isSidechain ?? false)) continue;
      if (v.type === 'system' && v.subtype === 'file_snapshot') continue;
      const tt = Date.parse(v.timestamp);
      if (Number.isNaN(tt) || tt > t) continue;
      if (tt > bestT) { best = en; bestT = tt; }
    }
    return best && t - bestT <= TIMESTAMP_BRIDGE_MS ? best : undefined;
  };
  for (let cur = leaf; cur && !seen.has(cur.value.uuid);) {
    seen.add(cur.value.uuid);
    chain.push(cur);
    const p = cur.value.parentUuid;
    if (!p) break;
    let next = byUuid.get(p);
    if (!next || seen.has(next.value.uuid)) next = bridge(cur);
    cur = next;
  }
  chain.reverse();
  // Parallel tool calls: results whose parent is an off-chain split line of an on-chain
  // assistant message (same message.id) are recovered and placed with the other results.
  const onChain = new Set(chain.map(c => c.value.uuid));
  const chainMsgIds = new Set(chain.filter(c => c.value.type === 'assistant').map(c => c.value.message?.id).filter(Boolean));
  const answered = new Set(chain.flatMap(c => (c.value.type === 'user' ? blocksOf(c.value.message?.content) : []).filter(b => b.type === 'tool_result').map(b => b.tool_use_id)));
  const extra = [];
  for (const en of entries) {
    const v = en.value;
    if (onChain.has(v?.uuid) || v?.isSidechain) continue;
    if (v?.type === 'assistant' && chainMsgIds.has(v.message?.id)) { extra.push(en); continue; }
    if (v?.type === 'user' && blocksOf(v.message?.content).some(b => b.type === 'tool_result' && !answered.has(b.tool_use_id))) {
      const parent = byUuid.get(v.parentUuid);
      if (parent && parent.value.type === 'assistant' && chainMsgIds.has(parent.value.message?.id)) extra.push(en);
    }
  }
  if (!extra.length) return chain;
  // The chain keeps walk order (a result written before its call in the file stays after the
  // call); each recovered line goes after the chain line that precedes it in the file.
  const filePos = new Map(entries.map((en, i) => [en, i]));
  const byPos = chain.map((en, rank) => ({ at: filePos.get(en), rank })).sort((a, b) => a.at - b.at);
  const keyed = chain.map((en, rank) => ({ en, rank, at: -1 }));
  for (const en of extra) {
    const at = filePos.get(en);
    let rank = -1;
    for (const c of byPos) if (c.at < at) rank = c.rank; else break;
    keyed.push({ en, rank, at });
  }
  return keyed.sort((a, b) => a.rank - b.rank || a.at - b.at).map(k => k.en);
}

// ── the model Claude Code resumes with (§1.9.1) and what it implies ──
export const CLAUDE_DEFAULT_MODEL = 'claude-opus-5-5';
// Models in Claude Code 2.1.328's model table that are not retired (claude-sonnet-4-5 is
// "deprecated" and still used). A recorded model outside this list (a retired Claude model, a
// model served through a proxy such as MiniMax-M2.7) is replaced by the default.
const CLAUDE_CURRENT_MODELS = new Set([
  'claude-haiku-4-5', 'claude-haiku-5-5', 'claude-sonnet-4-5', 'claude-sonnet-4-6', 'claude-sonnet-5', 'claude-sonnet-5-5',
  'claude-opus-4-5', 'claude-opus-4-6', 'claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5', 'claude-opus-5-5',
  'claude-fable-5', 'claude-fable-5-1', 'claude-fable-5-2', 'claude-mythos-5', 'claude-mythos-5-1', 'claude-mythos-5-2',
]);
export function claudeResumeModel(recorded) {
  if (typeof recorded !== 'string') return CLAUDE_DEFAULT_MODEL;
  return CLAUDE_CURRENT_MODELS.has(recorded.replace(/\[1m\]$/, '').replace(/-\d{8}$/, '')) ? recorded : CLAUDE_DEFAULT_MODEL;
}
/** Models that take reminders as role:"system" entries inside `messages` (opus-4-8 and later). */
export function claudeUsesSystemEntries(model) {
  const m = /^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d+))?/.exec(model.replace(/-\d{8}$/, ''));
  if (!m) return false;
  const major = Number(m[2]), minor = Number(m[3] ?? 0);
  return m[1] === 'fable' || m[1] === 'mythos' || major >= 5 || (m[1] === 'opus' && major === 4 && minor >= 8);
}

// ── attachment lines (§1.6.1) ──
const sysReminder = t => `<system-reminder>\n${t}\n</system-reminder>`;
// Attachment types Claude Code 2.1.328 renders as nothing (its renderers return []), or that
// rendered nothing on the corpus under the probe (todo_reminder: the TodoWrite tool is off).
const CLAUDE_SILENT_ATTACHMENTS = new Set([
  'already_read_file', 'async_hook_response_batch', 'batching_reminder_sent', 'secondary_reminder_sent', 'prompt_as_file', 'command_permissions',
  'edited_image_file', 'hook_cancelled', 'hook_error_during_execution', 'hook_non_blocking_error', 'hook_system_message', 'hook_permission_decision',
  'hook_deferred_tool', 'goal_status', 'session_cron_carry', 'projects_thread_ask', 'structured_output', 'max_turns_reached', 'teammate_shutdown_batch',
  'withheld_memory', 'goals', 'thinking_drop', 'tool_results_cut', 'credential_org', 'tool_offer_record', 'prompt_snapshot', 'prompt_render_point',
  'whole_texts_withdrawn', 'deferred_tools_record', 'todo_reminder', 'attention_budget', 'context_efficiency',
  'teammate_mailbox', 'team_context',
]);
const HOOK_SUCCESS_EVENTS = ['SessionStart', 'UserPromptSubmit', 'UserPromptExpansion'];
const escapeTrailingLt = s => s.replace(/<(?=\s*(?:\/\s*)?$)/, '&lt;');
/**
 * What Claude Code 2.1.328 renders for one attachment: {text} (a <system-reminder> text block),
 * null (nothing), or {unmodelled: true} for a type this model does not reproduce.
 */
export function renderClaudeAttachment(att) {
  const type = att?.type;
  if (typeof type !== 'string' || CLAUDE_SILENT_ATTACHMENTS.has(type)) return null;
  switch (type) {
    case 'skill_listing': {
      if (!att.content) return null;
      const [also, tail] = att.addsToEarlier === true ? ['also ', '. This list adds to the skills listed earlier in this conversation and is not the full list'] : ['', ''];
      const body = att.shortened === true ? `${att.content}\nThis list is shortened to save room: a description that ends in \u2026 is cut there. The skills themselves are not cut. When a request fits a skill's name or the shown part of its description, use the skill.` : att.content;
      return { text: sysReminder(`The following skills are ${also}available for use with the Skill tool${tail}:\n\n${body}`) };
    }
    case 'task_reminder': {
      if (att.statusKeeper === 'app' || att.statusKeeper === 'claude') return { unmodelled: true };
      const items = (att.content ?? []).map(y => `#${y.id}. [${y.status}] ${y.subject}`).join('\n');
      let t = "The task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n";
      if (items.length > 0) t += `\n\nHere are the existing tasks:\n\n${items}`;
      return { text: sysReminder(t) };
    }
    case 'hook_success':
      return HOOK_SUCCESS_EVENTS.includes(att.hookEvent) && att.content ? { text: sysReminder(escapeTrailingLt(`${att.hookName} hook success: ${att.content}`)) } : null;
    case 'hook_additional_context':
      return Array.isArray(att.content) && att.content.length > 0 ? { text: sysReminder(escapeTrailingLt(`${att.hookName} hook additional context: ${att.content.join('\n')}`)) } : null;
    case 'edited_text_file': {
      const note = `Note: ${att.filename} changed on disk since you last read it. That's usually deliberate, so take it as the current state rather than reverting it; if the change looks wrong, say so rather than undoing it yourself \u2014 otherwise no need to call it out.`;
      return { text: sysReminder(att.snippet === '' ? `${note} The changes are not shown here; use Read if you need the current content.` : `${note} Here are the relevant changes (shown with line numbers):\n${att.snippet}`) };
    }
    case 'auto_mode':
      // the variants (bypass, steerOnly, bashFirst, finishExposedWork, consent flow) add text not modelled here
      if (att.bypass || att.steerOnly || att.bashFirst || att.finishExposedWork || att.autoModeConsentFlow) return { unmodelled: true };
      return { text: sysReminder(CLAUDE_AUTO_MODE_TEXT) };
    case 'auto_mode_exit':
      if (att.steerOnly || att.bashFirst || att.finishExposedWork) return { unmodelled: true };
      return { text: sysReminder('## Exited Auto Mode\n\nYou have exited auto mode. The user may now want to interact more directly. You should ask clarifying questions when the approach is ambiguous rather than making assumptions.') };
    default:
      return { unmodelled: true };
  }
}
const CLAUDE_AUTO_MODE_TEXT = "## Auto Mode Active\n\nBias toward working without stopping for clarifying questions \u2014 when you'd normally pause to check, make the reasonable call and keep going; they'll redirect you if needed. If the user, a skill, or the shape of the task suggests they want you to ask (with AskUserQuestion or otherwise), do so. And even absent that signal, it's still fine to stop when you're genuinely blocked \u2014 unclear direction, missing input, a decision only they can make.\n\nBefore any command that could discard uncommitted work \u2014 `git checkout`/`restore`/`reset`/`clean`, `rm -rf` in the repo, restoring from a snapshot \u2014 run `git status` first and stash (with `-u` for untracked) or commit anything that's there. When staging or committing, review what's included (`git status` after a broad `git add`), and if you see anything suspicious that might reveal secrets \u2014 even if the filename looks innocuous \u2014 double-check the file's contents before pushing.";

// ── local-command records at the end of the chain (§1.8.2) ──
// Claude Code's classification of a user line by its last text: <command-name> = record,
// <local-command-stdout|stderr> = output, <local-command-caveat> (isMeta only) = caveat, a
// non-meta text starting with "/" = bareRecord.
function localCommandKind(v) {
  if (v?.type !== 'user' || v.promptSource !== undefined) return undefined;
  const c = v.message?.content;
  const t = Array.isArray(c) ? c.findLast(b => b?.type === 'text')?.text : typeof c === 'string' ? c : undefined;
  if (typeof t !== 'string') return undefined;
  if (t.startsWith('<command-name>')) return 'record';
  if (t.startsWith('<local-command-stdout>') || t.startsWith('<local-command-stderr>')) return 'output';
  if (t.startsWith('<local-command-caveat>')) return v.isMeta === true ? 'caveat' : undefined;
  if (v.isMeta !== true && t.trim().startsWith('/')) return 'bareRecord';
  return undefined;
}
/** True when the loaded lines end with a caveat-introduced local-command record (Claude Code's L4). */
export function endsWithLocalCommandRecord(values) {
  let i = values.length - 1;
  while (i >= 0 && (values[i].type === 'system' || values[i].type === 'progress' || values[i].type === 'attachment')) i--;
  if (i < 0 || localCommandKind(values[i]) === undefined) return false;
  let sawRecord = false, bareAt, allMeta = true;
  for (let y = i; y >= 0; y--) {
    const v = values[y];
    if (v.type === 'system' || v.type === 'progress' || v.type === 'attachment') continue;
    const kind = localCommandKind(v);
    if (kind === 'caveat') return bareAt === undefined || Date.parse(v.timestamp) >= bareAt;
    if (kind === undefined || sawRecord) break;
    sawRecord = kind === 'record' || kind === 'bareRecord';
    if (kind === 'bareRecord') bareAt = Date.parse(v.timestamp);
    allMeta &&= v.type === 'user' && v.isMeta === true;
  }
  return allMeta;
}

function mergeUser(a, b) {
  // Claude Code NU(): string content becomes a text block; if a ends with text and b starts with
  // text, a's last text gets "\n"; then tool_result blocks are hoisted before all other blocks.
  const x = blocksOf(a.content).slice(), y = blocksOf(b.content);
  const last = x.at(-1);
  if (last?.type === 'text' && y[0]?.type === 'text') x[x.length - 1] = { ...last, text: last.text + '\n' };
  const all = [...x, ...y];
  return { ...a, content: [...all.filter(k => k.type === 'tool_result'), ...all.filter(k => k.type !== 'tool_result')], sources: [...a.sources, ...b.sources] };
}

/**
 * Claude Code mXo(): an attachment's reminder joins the user message before it. Following a
 * tool_result it is folded into that result (string content: both trimmed, joined by a blank
 * line; block content: a "\n" on its last text, then the reminder as a text block); otherwise
 * it is appended, with no "\n" on the text before it.
 */
function appendAttachment(a, b) {
  const x = blocksOf(a.content).slice(), add = blocksOf(b.content);
  const last = x.at(-1);
  let content;
  if (last?.type === 'tool_result' && add.every(k => k.type === 'text')) {
    const c = last.content;
    if (typeof c === 'string' || c == null) content = [...x.slice(0, -1), { ...last, content: [(c ?? '').trim(), ...add.map(k => k.text.trim())].filter(Boolean).join('\n\n') }];
    else if (Array.isArray(c) && !c.some(k => k.type === 'search_result')) {
      const lt = c.at(-1);
      content = [...x.slice(0, -1), { ...last, content: [...(lt?.type === 'text' ? [...c.slice(0, -1), { ...lt, text: lt.text + '\n' }] : c), ...add] }];
    }
  }
  content ??= [...x, ...add];
  return { ...a, content, sources: [...a.sources, ...b.sources] };
}

export const CLAUDE_ORPHANED_RESULT = '[Orphaned tool result removed due to conversation resume]';
export const CLAUDE_TOOL_LOADED = 'Tool loaded.';
const hasToolReference = c => Array.isArray(c) && c.some(b => b?.type === 'tool_result' && Array.isArray(b.content) && b.content.some(k => k?.type === 'tool_reference'));

/**
 * Claude Code: messages sent on resume, before the new prompt.
 * @returns {{messages: {role, content, sources: number[], synthetic?: string, attachment?: string}[], chainLines: number[], model: string, systemEntries: {line, type, text}[], unmodelled: {line, type}[]}}
 */
export function reconstructClaude(text, { renameTools = true } = {}) {
  const entries = parseJsonl(text);
  const chain = claudeChain(entries);
  let recorded;
  for (const en of chain) if (en.value.type === 'assistant' && !isApiError(en.value) && typeof en.value.message?.model === 'string') recorded = en.value.message.model;
  const model = claudeResumeModel(recorded);
  const systemEntries = claudeUsesSystemEntries(model);
  const systemOut = [], unmodelled = [];
  const msgs = [];
  for (const en of chain) {
    const v = en.value;
    if (v.type === 'system') {
      if (v.subtype !== 'local_command' || v.isDisplayOnly === true) continue;
      msgs.push({ role: 'user', content: v.content, sources: [en.line] });
      continue;
    }
    if (v.type === 'attachment') {
      const r = renderClaudeAttachment(v.attachment);
      if (r?.unmodelled) unmodelled.push({ line: en.line, type: v.attachment?.type });
      if (!r?.text) continue;
      if (systemEntries) { systemOut.push({ line: en.line, type: v.attachment.type, text: r.text }); continue; }
      msgs.push({ role: 'user', content: [{ type: 'text', text: r.text }], sources: [en.line], attachment: v.attachment.type });
      continue;
    }
    if (!isMsg(v) || !v.message) continue; // progress, snapshots …
    if (isApiError(v)) { msgs.push({ role: 'assistant', content: [], sources: [en.line], apiError: true }); continue; }
    if (v.type === 'user' && Array.isArray(v.message.content) && v.message.content.length === 0) continue;
    let content = v.message.content;
    if (v.type === 'assistant' && Array.isArray(content)) {
      if (renameTools) content = content.map(b => (b.type === 'tool_use' && CLAUDE_TOOL_RENAMES[b.name] ? { ...b, name: CLAUDE_TOOL_RENAMES[b.name] } : b));
      // thinking is bound to the model that wrote it: a reply of another model loses it
      if (v.message.model !== model) content = content.filter(b => b.type !== 'thinking' && b.type !== 'redacted_thinking');
    }
    if (v.type === 'user' && hasToolReference(content) && !content.some(b => b.type === 'text' && b.text.startsWith(CLAUDE_TOOL_LOADED))) content = [...content, { type: 'text', text: CLAUDE_TOOL_LOADED }];
    msgs.push({ role: v.type, content, id: v.message.id, sources: [en.line] });
  }
  // Resume repairs, judged on the loaded chain (API-error replies still count as the last reply):
  const lastReal = msgs.findLast(m => !m.attachment);
  if (lastReal?.role === 'assistant' && !lastReal.apiError) {
    const pending = blocksOf(lastReal.content).filter(b => b.type === 'tool_use').map(b => b.id);
    // pending = tool_use ids of the final assistant message id group without a result after it
    const groupIds = msgs.filter(m => m.role === 'assistant' && m.id === lastReal.id).flatMap(m => blocksOf(m.content).filter(b => b.type === 'tool_use').map(b => b.id));
    const unresolved = [...new Set([...groupIds, ...pending])];
    if (unresolved.length) {
      msgs.push({ role: 'user', content: unresolved.map(id => ({ type: 'tool_result', content: CLAUDE_INTERRUPTED_TOOL_RESULT, is_error: true, tool_use_id: id })), sources: [], synthetic: 'interrupted-tool-result' });
    }
  }
  const synthetic = msgs.at(-1)?.synthetic === 'interrupted-tool-result';
  if (msgs.findLast(m => !m.attachment)?.role === 'user' && (synthetic || !endsWithLocalCommandRecord(chain.map(c => c.value)))) {
    msgs.push({ role: 'assistant', content: [{ type: 'text', text: CLAUDE_NO_RESPONSE }], sources: [], synthetic: 'no-response-requested' });
  }

  // Attachments bubble up to just after the nearest assistant message (API-error placeholders
  // included) or user message that starts with a tool_result.
  const ordered = [];
  let pendingAtt = [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.attachment) { pendingAtt.push(m); continue; }
    const stop = m.role === 'assistant' || (m.role === 'user' && blocksOf(m.content)[0]?.type === 'tool_result' && Array.isArray(m.content));
    if (stop && pendingAtt.length) { ordered.push(...pendingAtt); pendingAtt = []; }
    ordered.push(m);
  }
  ordered.push(...pendingAtt);
  ordered.reverse();

  // API normalisation.
  const out = [];
  for (const m of ordered) {
    if (m.apiError) continue;
    const prev = out.at(-1);
    if (m.role === 'assistant' && prev?.role === 'assistant' && m.id && prev.id === m.id) {
      prev.content = [...blocksOf(prev.content), ...blocksOf(m.content)];
      prev.sources = [...prev.sources, ...m.sources];
      continue;
    }
    // A split line of the same reply written after some of its results (streaming tool
    // execution): it joins the earlier assistant message; its results join the results message.
    if (m.role === 'assistant' && m.id && prev?.role === 'user' && out.at(-2)?.role === 'assistant' && out.at(-2).id === m.id &&
      Array.isArray(prev.content) && prev.content.every(b => b.type === 'tool_result')) {
      const a = out.at(-2);
      a.content = [...blocksOf(a.content), ...blocksOf(m.content)];
      a.sources = [...a.sources, ...m.sources];
      continue;
    }
    if (m.role === 'user' && prev?.role === 'user') { out[out.length - 1] = m.attachment ? appendAttachment(prev, m) : mergeUser(prev, m); continue; }
    out.push({ ...m, ...(m.attachment ? { content: blocksOf(m.content) } : {}) });
  }
  for (let i = 0; i < out.length; i++) {
    const m = out[i];
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    // tool_use blocks move after text/thinking when a text block follows a tool_use (cXo())
    const c = m.content.filter(b => !(b.type === 'text' && b.text === ''));
    const firstTool = c.findIndex(b => b.type === 'tool_use');
    if (firstTool >= 0 && c.slice(firstTool).some(b => b.type !== 'tool_use')) m.content = [...c.filter(b => b.type !== 'tool_use'), ...c.filter(b => b.type === 'tool_use')];
    else m.content = c;
  }
  // tool_use blocks that the next message does not answer are removed (mid-session only: the
  // final reply got synthetic results above)
  for (let i = 0; i < out.length; i++) {
    const m = out[i];
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    const next = out[i + 1];
    const ans = new Set(next?.role === 'user' ? blocksOf(next.content).filter(b => b.type === 'tool_result').map(b => b.tool_use_id) : []);
    if (m.content.some(b => b.type === 'tool_use' && !ans.has(b.id))) m.content = m.content.filter(b => b.type !== 'tool_use' || ans.has(b.id));
  }
  // thinking-only assistant messages are dropped; whitespace-only ones too
  const isThinking = b => b.type === 'thinking' || b.type === 'redacted_thinking';
  let res = out.filter(m => !(m.role === 'assistant' && Array.isArray(m.content) && m.content.length > 0 && m.content.every(isThinking)));
  res = res.filter(m => !(m.role === 'assistant' && Array.isArray(m.content) && m.content.length > 0 && m.content.every(b => isThinking(b) || (b.type === 'text' && ['', CLAUDE_NO_CONTENT].includes(b.text.trim())))));
  // after dropping, users may be adjacent again
  const merged = [];
  for (const m of res) {
    const prev = merged.at(-1);
    if (m.role === 'user' && prev?.role === 'user') merged[merged.length - 1] = mergeUser(prev, m);
    else merged.push(m);
  }
  // trailing thinking of the last assistant message is stripped
  const lastA = merged.at(-1);
  if (lastA?.role === 'assistant' && Array.isArray(lastA.content) && lastA.content.length && isThinking(lastA.content.at(-1))) {
    let k = lastA.content.length;
    while (k > 0 && isThinking(lastA.content[k - 1])) k--;
    lastA.content = k ? lastA.content.slice(0, k) : [{ type: 'text', text: '[No message content]', citations: [] }];
  }
  // empty assistant content becomes "(no content)" (the new prompt follows, so none is last)
  for (let i = 0; i < merged.length; i++) {
    const m = merged[i];
    if (m.role === 'assistant' && Array.isArray(m.content) && m.content.length === 0) m.content = [{ type: 'text', text: CLAUDE_NO_CONTENT, citations: [] }];
  }
  return { messages: ensureToolResultPairing(merged).map(({ id, apiError, ...m }) => m), chainLines: chain.map(c => c.line), model, systemEntries: systemOut, unmodelled };
}

/**
 * Claude Code's last pass (ensureToolResultPairing): tool_result blocks must answer the tool_use
 * blocks of the assistant message right before them. A user message whose results follow no
 * assistant message loses them (left empty: the first message becomes the "orphaned" text, a
 * later one is dropped); results naming no call of the reply before are removed (left empty: the
 * string "(no content)"); a repeated tool_use id is removed from the later reply.
 */
function ensureToolResultPairing(msgs) {
  const out = [], seen = new Set();
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role !== 'assistant') {
      if (m.role === 'user' && Array.isArray(m.content) && out.at(-1)?.role !== 'assistant' && m.content.some(b => b.type === 'tool_result')) {
        const rest = m.content.filter(b => b.type !== 'tool_result');
        if (rest.length > 0) out.push({ ...m, content: rest });
        else if (out.length === 0) out.push({ ...m, content: [{ type: 'text', text: CLAUDE_ORPHANED_RESULT }] });
        continue;
      }
      out.push(m);
      continue;
    }
    const blocks = blocksOf(m.content);
    const uses = [];
    const kept = blocks.filter(b => {
      if (b.type !== 'tool_use') return b.type !== 'tool_result';
      if (seen.has(b.id)) return false;
      seen.add(b.id); uses.push(b.id);
      return true;
    });
    out.push(kept.length === blocks.length ? m : { ...m, content: kept.length ? kept : [{ type: 'text', text: '[Tool use interrupted]', citations: [] }] });
    const next = msgs[i + 1];
    if (next?.role !== 'user' || !Array.isArray(next.content)) continue;
    const want = new Set(uses), got = new Set();
    const content = next.content.filter(b => {
      if (b.type !== 'tool_result') return true;
      if (!want.has(b.tool_use_id) || got.has(b.tool_use_id)) return false;
      got.add(b.tool_use_id);
      return true;
    });
    if (content.length !== next.content.length) { out.push({ ...next, content: content.length ? content : CLAUDE_NO_CONTENT }); i++; }
  }
  return out;
}

function stripCache(x) {
  if (Array.isArray(x)) return x.map(stripCache);
  if (x && typeof x === 'object') {
    const o = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'cache_control') o[k] = stripCache(v);
    return o;
  }
  return x;
}

/**
 * Claude Code request → the part that comes from the file. Drops role:"system" entries (newer
 * models get the environment, effort and attachment reminders as in-conversation system
 * messages), the new prompt, and the <system-reminder> blocks the CLI injects with it: those
 * whose text occurs neither in the session file nor among `fileTexts` (text the reconstruction
 * derives from the file, e.g. rendered attachments). They usually trail the last user message,
 * but they are attachments of the new turn and bubble up like any other (§1.6.1): the
 * attribution reminder lands right after the last assistant message or tool_result, before
 * trailing local-command lines. There it was appended without the "\n" join a merge would give
 * the text before it; that "\n" is restored so the result is what the file alone produces.
 */
export function normalizeClaudeRequest(body, sessionText, prompt = 'Reply with the single word ok.', fileTexts = new Set()) {
  const msgs = stripCache(body.messages || []).filter(m => m.role !== 'system');
  const last = msgs.at(-1);
  const injected = [];
  if (last?.role === 'user') {
    const blocks = blocksOf(last.content).slice();
    if (blocks.at(-1)?.type === 'text' && blocks.at(-1).text === prompt) injected.unshift(blocks.pop());
    const isInjected = b => b?.type === 'text' && b.text.startsWith('<system-reminder>') && !fileTexts.has(b.text.replace(/\n$/, '')) &&
      !sessionText.includes(JSON.stringify(b.text.trim()).slice(1, -1).slice(0, 200));
    const kept = [];
    for (let i = 0; i < blocks.length; i++) {
      if (!isInjected(blocks[i])) { kept.push(blocks[i]); continue; }
      injected.push(blocks[i]);
      const before = kept.at(-1), after = blocks.slice(i + 1).find(b => !isInjected(b));
      if (before?.type === 'text' && after?.type === 'text' && !before.text.endsWith('\n')) kept[kept.length - 1] = { ...before, text: before.text + '\n' };
    }
    if (kept.length === 0) msgs.pop();
    else msgs[msgs.length - 1] = { ...last, content: kept };
  }
  return { messages: msgs, injected };
}

// Claude Code 2.1.328 sometimes splits a multi-byte UTF-8 character across its read buffer on
// large transcripts and sends U+FFFD instead (non-deterministic); compare such text leniently.
const deUtf8 = s => s.replace(/[^\x00-\x7f]+/g, '?');
function canonClaude(m, loose) {
  let c = blocksOf(m.content);
  if (loose === 'utf8') return deUtf8(JSON.stringify({ role: m.role, content: c }).replace(/\\n(?=")/g, ''));
  if (loose) c = c.map((b, i) => (i === c.length - 1 && b.type === 'text' ? { ...b, text: b.text.replace(/\n$/, '') } : b));
  return JSON.stringify({ role: m.role, content: c });
}

export function compareClaude(sessionText, body, opts = {}) {
  const ref = reconstructClaude(sessionText);
  const fileTexts = new Set(ref.messages.flatMap(m => blocksOf(m.content).filter(b => b.type === 'text').map(b => b.text.replace(/\n$/, ''))));
  const got = normalizeClaudeRequest(body, sessionText, opts.prompt, fileTexts).messages;
  const diffs = [];
  // When the file's context ends with a tool_result whose content is a string, Claude Code appends
  // its injected <system-reminder>s to that content ("\n\n<system-reminder>…"): undo that.
  const lastRef = ref.messages.at(-1), lastGot = got.at(-1);
  if (lastRef && lastGot && Array.isArray(lastGot.content)) {
    const refRes = new Map(blocksOf(lastRef.content).filter(b => b.type === 'tool_result').map(b => [b.tool_use_id, b]));
    lastGot.content = lastGot.content.map(b => {
      const r = b.type === 'tool_result' ? refRes.get(b.tool_use_id) : undefined;
      // folding trims the result (Claude Code h9e()), so a trailing newline of the file's result is gone too
      if (r && typeof r.content === 'string' && typeof b.content === 'string' && b.content !== r.content && b.content.startsWith(r.content.trim()) &&
        /^\n{1,2}<system-reminder>/.test(b.content.slice(r.content.trim().length))) { (opts.notes ??= []).push('injected reminders appended to the last tool_result'); return { ...b, content: r.content }; }
      return b;
    });
  }
  const n = Math.max(ref.messages.length, got.length);
  for (let i = 0; i < n; i++) {
    const a = ref.messages[i], b = got[i];
    if (!a || !b) { diffs.push({ index: i, reason: !a ? 'missing in reference' : 'missing in request', ref: a && summarize(a), got: b && summarize(b) }); continue; }
    // a string-content message stays a string unless merged; the final message may be merged with
    // the new prompt without a "\n" join (observed) — compare it loosely.
    const loose = i === n - 1;
    if (canonClaude(a, loose) !== canonClaude(b, loose) && JSON.stringify(stripCache(a.content)) !== JSON.stringify(b.content)) {
      if (JSON.stringify(b).includes('\ufffd') && canonClaude(a, 'utf8') === canonClaude(b, 'utf8')) { (opts.notes ??= []).push(`message ${i}: U+FFFD in sent text (read-buffer UTF-8 split)`); continue; }
      diffs.push({ index: i, reason: 'content differs', ref: summarize(a), got: summarize(b) });
    }
  }
  // exact: same role and byte-identical content (string stays string) except the cache_control
  // markers and the documented "\n" on a final message merged with the new prompt
  let exact = diffs.length === 0;
  for (let i = 0; exact && i < n; i++) {
    const a = ref.messages[i], b = got[i];
    if (JSON.stringify({ role: a.role, content: a.content }) !== JSON.stringify({ role: b.role, content: b.content }) && canonClaude(a, true) !== canonClaude(b, true)) exact = false;
    if (i < n - 1 && canonClaude(a, false) !== canonClaude(b, false)) exact = false;
    if (typeof a.content !== typeof b.content && i < n - 1) exact = false;
  }
  if (opts.notes?.some(n => n.includes('U+FFFD'))) exact = false;
  return { agent: 'claude-code', refMessages: ref.messages.length, sentMessages: got.length, match: diffs.length === 0, exact, diffs, ...(opts.notes ? { notes: opts.notes } : {}) };
}

function summarize(m) {
  return { role: m.role, sources: m.sources, synthetic: m.synthetic, blocks: blocksOf(m.content).map(b => b.type + (b.type === 'text' ? ':' + JSON.stringify(b.text.slice(0, 40)) : b.type === 'tool_use' ? ':' + b.id : b.type === 'tool_result' ? ':' + b.tool_use_id : '')) };
}

// ───────────────────────────── Codex ─────────────────────────────

// Codex's "contextual" user messages (not counted as user turns, dropped by compaction rebuilds).
const CODEX_CONTEXTUAL_PREFIXES = ['<environment_context>', '<user_instructions>', '# AGENTS.md instructions', '<user_shell_command>', '<turn_aborted>', '<subagent_notification>'];
const isCodexUserTurn = it => it.type === 'message' && it.role === 'user' &&
  !(it.content ?? []).every(c => typeof c.text === 'string' && CODEX_CONTEXTUAL_PREFIXES.some(p => c.text.trimStart().startsWith(p)));
// Output truncation observed with Codex 0.169.0's default model: a 10 000-token policy plus a 20 %
// serialisation allowance = 12 000 tokens ≈ 48 000 bytes (tokens ≈ ceil(bytes / 4)); longer text
// keeps 24 000 bytes of head and tail around "…N tokens truncated…".
export const CODEX_OUTPUT_BUDGET_TOKENS = 12000;
export function codexTruncate(text, budgetTokens = CODEX_OUTPUT_BUDGET_TOKENS) {
  const buf = Buffer.from(text, 'utf8');
  const total = Math.ceil(buf.length / 4);
  if (total <= budgetTokens) return text;
  const half = (budgetTokens * 4) / 2;
  let a = half; while (a > 0 && (buf[a] & 0xc0) === 0x80) a--;
  let b = buf.length - half; while (b < buf.length && (buf[b] & 0xc0) === 0x80) b++;
  return buf.subarray(0, a).toString('utf8') + `…${total - budgetTokens} tokens truncated…` + buf.subarray(b).toString('utf8');
}

/**
 * Codex: history items sent on resume, before what the CLI injects. Every response_item in file
 * order except ghost_snapshot; a `compacted` line replaces everything before it — by its
 * replacement_history when present, else by the user turns so far (contextual ones dropped)
 * followed by the summary as a user message; event_msg thread_rolled_back drops the last N user
 * turns; *_call_output text is middle-truncated to the output budget; reasoning items always
 * carry summary/content/encrypted_content (null when absent); then calls without output get a
 * synthetic "aborted" output right after the call and outputs without a call are dropped.
 */
export function reconstructCodex(text) {
  const entries = parseJsonl(text);
  let items = [];
  for (const en of entries) {
    const { type, payload } = en.value || {};
    if (type === 'response_item' && payload && payload.type !== 'ghost_snapshot') {
      let item = payload;
      if (/_call_output$/.test(item.type) && typeof item.output === 'string') item = { ...item, output: codexTruncate(item.output) };
      if (item.type === 'reasoning') item = { ...item, content: item.content ?? null, encrypted_content: item.encrypted_content ?? null };
      items.push({ item, line: en.line });
    } else if (type === 'compacted' && payload) {
      if (Array.isArray(payload.replacement_history)) items = payload.replacement_history.map(item => ({ item, line: en.line }));
      else items = [...items.filter(x => isCodexUserTurn(x.item)), { item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: payload.message ?? '' }] }, line: en.line, note: 'compaction summary' }];
    } else if (type === 'event_msg' && payload?.type === 'thread_rolled_back') {
      const n = payload.num_turns ?? 0;
      const userIdx = items.map((x, i) => (isCodexUserTurn(x.item) ? i : -1)).filter(i => i >= 0);
      if (n > 0 && userIdx.length) items = items.slice(0, userIdx[Math.max(0, userIdx.length - n)]);
    }
  }
  const outputs = new Set(items.filter(x => /_call_output$/.test(x.item.type)).map(x => x.item.call_id));
  const calls = new Set(items.filter(x => /_call$/.test(x.item.type)).map(x => x.item.call_id));
  const res = [];
  for (const x of items) {
    if (/_call_output$/.test(x.item.type) && !calls.has(x.item.call_id)) continue;
    res.push(x);
    if ((x.item.type === 'function_call' || x.item.type === 'local_shell_call') && !outputs.has(x.item.call_id)) res.push({ item: { type: 'function_call_output', call_id: x.item.call_id, output: 'aborted' }, line: null, synthetic: 'aborted' });
    if (x.item.type === 'custom_tool_call' && !outputs.has(x.item.call_id)) res.push({ item: { type: 'custom_tool_call_output', call_id: x.item.call_id, output: 'aborted' }, line: null, synthetic: 'aborted' });
  }
  return res;
}

function canonCodex(it) {
  const { internal_chat_message_metadata_passthrough, id, ...rest } = it;
  return JSON.stringify(rest);
}

/**
 * Codex request → history part. The CLI adds, around the history, an `additional_tools`
 * developer item and a developer message with its base instructions (before the history when
 * the rollout's turn_context parses as a reference context, else after it), then developer
 * messages (<model_switch>, skills/permissions/collaboration mode, <tools>), a user
 * <environment_context> message, the new prompt and a `configuration_update` item.
 */
export function normalizeCodexRequest(body, refItems) {
  const input = body.input || [];
  // injected before the history: additional_tools + the base-instructions developer message
  let start = 0;
  while (start < input.length && (input[start].type === 'additional_tools' || (input[start].type === 'message' && input[start].role === 'developer' &&
    (input[start].internal_chat_message_metadata_passthrough?.content_item_kinds ?? []).includes('model.base_instructions')))) start++;
  return { history: input.slice(start, start + refItems.length), start, injectedAfter: input.slice(start + refItems.length) };
}

export function compareCodex(sessionText, body) {
  const ref = reconstructCodex(sessionText);
  const { history, start, injectedAfter } = normalizeCodexRequest(body, ref);
  const diffs = [], notes = [];
  const nx = injectedAfter[0];
  const injectedKind = it => it && (it.type === 'additional_tools' || it.type === 'configuration_update' || (it.type === 'message' && (it.role === 'developer' ||
    (it.role === 'user' && (it.content ?? []).some(c => /^<environment_context>|^Reply with the single word ok\.$/.test(c.text ?? ''))))));
  if (!injectedKind(nx)) diffs.push({ index: ref.length, reason: 'request has history items the reference does not', got: nx && { type: nx.type, role: nx.role } });
  for (let i = 0; i < Math.max(ref.length, history.length); i++) {
    const a = ref[i], b = history[i];
    if (!a || !b || canonCodex(a.item) !== canonCodex(b)) {
      if (a?.synthetic && b && b.type === a.item.type && b.call_id === a.item.call_id) continue; // synthetic output text may differ
      // the probe decodes the request body chunk by chunk: a character split across two chunks arrives as U+FFFD (§1.11)
      if (a && b && JSON.stringify(b).includes('\ufffd') && deUtf8(canonCodex(a.item)) === deUtf8(canonCodex(b))) { notes.push(`item ${i}: U+FFFD in sent text (probe's chunked body decoding)`); continue; }
      diffs.push({ index: i, ref: a && { type: a.item.type, role: a.item.role, line: a.line, call_id: a.item.call_id }, got: b && { type: b.type, role: b.role, call_id: b.call_id, output: typeof b.output === 'string' ? b.output.slice(0, 60) : undefined } });
    }
  }
  return { agent: 'codex', refItems: ref.length, historyStart: start, match: diffs.length === 0, exact: diffs.length === 0 && notes.length === 0, diffs, ...(notes.length ? { notes } : {}) };
}

// ───────────────────────────── CLI ─────────────────────────────

export function compareFiles(session, request, verbose) {
  const text = readFileSync(session, 'utf8');
  const body = JSON.parse(readFileSync(request, 'utf8'));
  const first = parseJsonl(text)[0]?.value;
  const r = first?.type === 'session_meta' ? compareCodex(text, body) : compareClaude(text, body);
  if (!verbose) r.diffs = r.diffs.slice(0, 5);
  return r;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
const [cmd, ...rest] = isMain ? process.argv.slice(2) : [];
if (cmd === 'compare') {
  const r = compareFiles(rest[0], rest[1], rest.includes('--verbose'));
  console.log(JSON.stringify(r, null, 2));
  process.exit(r.match ? 0 : 1);
} else if (cmd === 'reconstruct') {
  const text = readFileSync(rest[0], 'utf8');
  const first = parseJsonl(text)[0]?.value;
  console.log(JSON.stringify(first?.type === 'session_meta' ? reconstructCodex(text) : reconstructClaude(text), null, 2));
} else if (cmd === 'check-all') {
  const dir = rest[0] || '/tmp/probe-ground-truth';
  let bad = 0, n = 0;
  for (const f of readdirSync(dir).filter(f => f.endsWith('.request.json')).sort()) {
    const rep = JSON.parse(readFileSync(join(dir, f.replace(/\.request\.json$/, '.json')), 'utf8'));
    const session = rep.file || rep.session;
    if (!session || !existsSync(session)) continue;
    const r = compareFiles(session, join(dir, f), false);
    n++; if (!r.match) bad++;
    console.log(`${r.match ? (r.exact === false ? 'MATCH~  ' : 'MATCH   ') : 'MISMATCH'} ${basename(f, '.request.json')}  ref=${r.refMessages ?? r.refItems} ${r.match ? '' : JSON.stringify(r.diffs[0])}`);
  }
  console.log(`${n - bad}/${n} match`);
  process.exit(bad ? 1 : 0);
} else if (cmd === 'table') {
  // Markdown table of every probe run under DIR (default /tmp/probe-ground-truth), for docs.
  const dir = rest[0] || '/tmp/probe-ground-truth';
  const abbrev = { user: 'u', assistant: 'a', system: 'sys', summary: 'sum', 'file-history-snapshot': 'fhs', 'queue-operation': 'q', progress: 'prog', attachment: 'att', 'last-prompt': 'lp', response_item: 'ri', event_msg: 'ev', turn_context: 'tc', session_meta: 'meta', compacted: 'cmp' };
  const rows = [], subagentRows = new Map();
  for (const f of readdirSync(dir).filter(f => f.endsWith('.json') && !f.endsWith('.request.json') && f !== 'index.json').sort()) {
    const rep = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const session = rep.file || rep.session;
    if (!session || !existsSync(session)) continue;
    const text = readFileSync(session, 'utf8');
    const ents = parseJsonl(text);
    const kinds = {};
    for (const e of ents) { const k = abbrev[e.value?.type] ?? e.value?.type; kinds[k] = (kinds[k] ?? 0) + 1; }
    const lineCol = `${text.split('\n').filter(Boolean).length} (${Object.entries(kinds).map(([k, v]) => k + v).join(' ')})`;
    const name = basename(f, '.json').replace(/^(claude-code|codex)__/, '').replace(/(\.claude__|config__)?projects__.+?__(sessions__)?(?=[0-9a-f]{8}-|agent-|subagents__)/, '')
      .replace(/\.codex__/, '').replace(/(archived_)?sessions__(\d{4}__\d\d__\d\d__)?rollout-/, (m, a) => (a ? 'archived:' : ''));
    const reqF = join(dir, basename(f, '.json') + '.request.json');
    const secs = rep.elapsedMs ? (rep.elapsedMs / 1000).toFixed(1) + ' s' : '';
    if (!existsSync(reqF)) {
      const out = (rep.output ?? rep.stderr ?? '').trim().split('\n');
      const why = (out.find(l => /Error:|No conversation found|no sessionId/.test(l)) ?? out[0]).replace(/^.*?(Error: )?(thread\/resume: )*(thread\/resume failed: )?/, '').replace(/ \(code -?\d+\).*$/, '').replace(/\/work\/shared\/corpus\/sessions\//, '');
      // sidechain-only subagent transcripts: one row per parent session
      const parent = /No conversation found with session ID: ([0-9a-f-]+)/.exec(why)?.[1];
      if (parent) {
        const g = subagentRows.get(parent) ?? { files: 0, lines: 0 };
        g.files++; g.lines += text.split('\n').filter(Boolean).length;
        subagentRows.set(parent, g);
        continue;
      }
      rows.push(`| ${name} | ${lineCol} | — | — | ${rep.error ?? ''}: ${why.slice(0, 110)} | ${secs} |`);
      continue;
    }
    const body = JSON.parse(readFileSync(reqF, 'utf8'));
    if (rep.agent === 'codex' || ents[0]?.value?.type === 'session_meta') {
      const ref = reconstructCodex(text);
      const { start } = normalizeCodexRequest(body, ref);
      const cnt = {};
      for (const x of ref) { const k = x.item.type.replace('function_call_output', 'fco').replace('function_call', 'fc').replace('custom_tool_call_output', 'ctco').replace('custom_tool_call', 'ctc') + (x.item.role ? ':' + x.item.role[0] : ''); cnt[k] = (cnt[k] ?? 0) + 1; }
      const r = compareCodex(text, body);
      rows.push(`| ${name} | ${lineCol} | ${body.input.length} = ${start} before + ${ref.length} history + ${body.input.length - start - ref.length} after | ${Object.entries(cnt).map(([k, v]) => k + '×' + v).join(' ')} | ${rep.findings?.length ? JSON.stringify(rep.findings) : 'none'}; reference ${r.match ? 'matches' : 'DIFFERS'} | ${secs} |`);
    } else {
      const ref = reconstructClaude(text);
      const norm = normalizeClaudeRequest(body, text);
      const sys = body.messages.filter(m => m.role === 'system').length;
      const b = { tool_use: 0, tool_result: 0, thinking: 0, text: 0, image: 0 };
      for (const m of ref.messages) for (const k of blocksOf(m.content)) { if (k.type in b) b[k.type]++; if (k.type === 'tool_result' && Array.isArray(k.content)) for (const c of k.content) if (c.type === 'image') b.image++; }
      const u = ref.messages.filter(m => m.role === 'user').length, a = ref.messages.filter(m => m.role === 'assistant').length;
      const syn = ref.messages.filter(m => m.synthetic).map(m => m.synthetic);
      const r = compareClaude(text, body);
      rows.push(`| ${name} | ${lineCol} | ${body.messages.length} = ${norm.messages.length} from file${sys ? ` + ${sys} system` : ''} + prompt${norm.messages.length < body.messages.length - sys ? '' : ' (merged)'} | u${u}/a${a}; ${Object.entries(b).filter(([, v]) => v).map(([k, v]) => k + '×' + v).join(' ')}${syn.length ? '; synthetic: ' + syn.join(', ') : ''} | ${rep.findings?.length ? JSON.stringify(rep.findings) : 'none'}; reference ${r.match ? (r.exact ? 'matches exactly' : 'matches') : 'DIFFERS'} | ${secs} |`);
    }
  }
  for (const [parent, g] of subagentRows) rows.push(`| ${g.files} subagent transcript(s) of ${parent} | ${g.lines} lines, sidechain only | — | — | Claude Code sent no request: No conversation found with session ID: ${parent} (each file) | |`);
  console.log('| session | file lines (by type) | sent = from file + injected | reconstructed roles / blocks | probe findings; reference | probe time |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} else if (cmd) {
  console.error('usage: resume-reference.mjs compare SESSION REQUEST | reconstruct SESSION | check-all [DIR]');
  process.exit(2);
}
