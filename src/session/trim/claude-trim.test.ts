/**
 * The Claude Code trimmer on real sessions (the shared corpus) and generated ones (compactions,
 * images, every edge case): what must hold for every input, then the policy knobs, then the
 * ways it must fail without writing anything. Expected values come from the input files and
 * from the trim contract (DESIGN.md), never from the trimmer's own output.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CtxvmError } from '../../errors.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';
import { createTokenCounter } from '../../text/tokens.js';
import { reconstructClaudeContext, type ClaudeContext } from '../claude/context.js';
import { scanClaudeSession } from '../claude/scan.js';
import type { LoadedSession } from '../driver.js';
import { loadSession, trimSession, validateSession, type TrimReport, type ValidationReport } from '../session.js';
import { trimClaudeSession } from './claude-trim.js';
import { pageIn } from './page-in.js';
import { resolvePolicy, type TrimPolicy } from './policy.js';
import { restoreSession } from './restore.js';
import { resolvePointer, STUB_PREFIX } from './stub.js';
import { countContextTokens } from '../token-breakdown.js';
import { findStubs } from './stub-scan.js';
import { containsValue } from '../../../test/support/trimmed-session.js';
import { newFindings } from '../session.js';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { claudeMainSessions, corpusSkipReason, generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';

type Json = Record<string, unknown>;
type Block = Json & { type: string };

// generated inputs are made at collection time (the generator is synchronous and deterministic)
const root = mkdtempSync(join(tmpdir(), 'ctxvm-trim-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const corpusSkip = corpusSkipReason();
const generatorSkip = generatorSkipReason();
printSkipReason(corpusSkip);
printSkipReason(generatorSkip);

const generated = generatorSkip
  ? []
  : [
      generateClaudeSession(join(root, 'gen-compactions-2.jsonl'), { turns: 30, seed: 11, compactions: 2, edgeCases: true }),
      generateClaudeSession(join(root, 'gen-no-compaction.jsonl'), { turns: 30, seed: 12, compactions: 0, edgeCases: true }),
      generateClaudeSession(join(root, 'gen-heavy-tools.jsonl'), { turns: 20, seed: 13, compactions: 1, edgeCases: true, profile: 'heavy-tools' }),
      generateClaudeSession(join(root, 'gen-conversational.jsonl'), { turns: 20, seed: 14, compactions: 0, edgeCases: 'thinking,redo', profile: 'conversational', images: false }),
    ];
/** Edited copies of corpus sessions (resume-model.md §4): a duplicated line, preserved messages. */
function editedCopies(): string[] {
  const sessions = claudeMainSessions();
  const plain = sessions.find((f) => f.endsWith('coverage-test-fix.jsonl'));
  const compacted = sessions.find((f) => f.includes('24a90d02'));
  const out: string[] = [];
  if (plain) {
    const lines = readFileSync(plain, 'utf8').split('\n');
    writeFileSync(join(root, 'edited-duplicate-line.jsonl'), lines.join('\n') + lines[9] + '\n');
    out.push(join(root, 'edited-duplicate-line.jsonl'));
  }
  if (compacted) {
    const c = readFileSync(compacted, 'utf8').split('\n');
    const at = c.findIndex((l) => l.includes('"compact_boundary"'));
    const uuidOf = (i: number) => (JSON.parse(c[i]!) as { uuid: string }).uuid;
    const boundary = JSON.parse(c[at]!) as { compactMetadata: Record<string, unknown> };
    boundary.compactMetadata.preservedMessages = { anchorUuid: uuidOf(at + 1), uuids: [uuidOf(at - 3), uuidOf(at - 2), uuidOf(at - 1)] };
    c[at] = JSON.stringify(boundary);
    writeFileSync(join(root, 'edited-preserved-messages.jsonl'), c.join('\n'));
    out.push(join(root, 'edited-preserved-messages.jsonl'));
  }
  return out;
}
const inputs = [...claudeMainSessions(), ...generated, ...editedCopies()];
const shortName = (f: string) => f.split('/').slice(-2).join('/');

// ───────────────────────────── helpers ─────────────────────────────

const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

/** Parsed JSON lines of a file, with their 1-based numbers and raw text (bad lines skipped). */
async function jsonLines(file: string): Promise<{ line: number; raw: string; value: Json }[]> {
  const out: { line: number; raw: string; value: Json }[] = [];
  (await readFile(file, 'utf8')).split('\n').forEach((raw, i) => {
    if (!raw.trim()) return;
    try {
      const value = JSON.parse(raw) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) out.push({ line: i + 1, raw, value: value as Json });
    } catch {
      // not JSON: not our business here
    }
  });
  return out;
}

const blocksOf = (v: Json): Block[] => {
  const c = (v.message as Json | undefined)?.content;
  return Array.isArray(c) ? (c as Block[]) : [];
};

/**
 * First line of the protected tail as the policy defines it: the last `k` assistant messages
 * (consecutive lines sharing message.id, sidechains aside) after the last compaction boundary,
 * with everything after them.
 */
function protectedFromLine(lines: { line: number; value: Json }[], k: number): number {
  if (k <= 0) return Number.POSITIVE_INFINITY;
  let start = 0;
  lines.forEach((l, i) => {
    if (l.value.type === 'system' && l.value.subtype === 'compact_boundary') start = i;
  });
  const firsts: number[] = [];
  let last: unknown;
  for (const l of lines.slice(start)) {
    if (l.value.type !== 'assistant' || l.value.isSidechain === true) continue;
    const id = (l.value.message as Json | undefined)?.id ?? `line:${l.line}`;
    if (id !== last) firsts.push(l.line);
    last = id;
  }
  return firsts.length === 0 ? Number.POSITIVE_INFINITY : firsts[firsts.length - Math.min(k, firsts.length)]!;
}

/** Every string in `value` with its path. */
function* strings(value: unknown, path: (string | number)[] = []): Generator<{ path: (string | number)[]; text: string }> {
  if (typeof value === 'string') yield { path, text: value };
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], [...path, i]);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* strings(v, [...path, k]);
}

const countBy = (xs: string[]) => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
};
const textsOf = (s: LoadedSession, category: 'userText' | 'assistantText') => s.context.entries.flatMap((e) => e.parts.filter((p) => p.category === category).map((p) => p.text));
const SIZE = /\d[\d,]* lines|\d+(\.\d+)? (B|KB|MB)\b/;
const counter = createTokenCounter();
/** The policy's own measure of a stub's cost against its payload (the tokenizer's estimate). */
const estimateOf = (v: unknown) => counter.estimate(typeof v === 'string' ? v : JSON.stringify(v));

interface Outcome {
  input: string;
  output: string;
  store: ObjectStore;
  report: TrimReport;
  hashBefore: string;
  hashAfter: string;
  restoredSame: boolean;
  validation: ValidationReport;
  original: { loaded: LoadedSession; ctx: ClaudeContext; lines: { line: number; raw: string; value: Json }[] };
  trimmed: { loaded: LoadedSession; ctx: ClaudeContext; lines: { line: number; raw: string; value: Json }[] };
}

let caseNo = 0;
/** Trims `input` with `policy` into a fresh dir and store, restores, and loads both sides. */
async function runTrim(input: string, policy: Partial<TrimPolicy> = {}): Promise<Outcome> {
  const dir = join(root, `case-${++caseNo}`);
  await mkdir(dir);
  const store = createFsObjectStore({ root: join(dir, 'objects') });
  const output = join(dir, 'trimmed.jsonl');
  const hashBefore = await sha256(input);
  const report = await trimSession({ input, output, store, policy });
  const hashAfter = await sha256(input);
  // a trim with nothing to do writes the input's bytes, which restore only copies when asked to
  const untouched = !(await readFile(output, 'utf8')).includes('"ctxvm":{');
  if (untouched) expect(await sha256(output)).toBe(hashBefore);
  await restoreSession({ input: output, output: join(dir, 'restored.jsonl'), store, allowUntrimmed: untouched });
  const restoredSame = Buffer.compare(await readFile(input), await readFile(join(dir, 'restored.jsonl'))) === 0;
  const side = async (file: string) => ({ loaded: await loadSession(file), ctx: await reconstructClaudeContext(await scanClaudeSession(file)), lines: await jsonLines(file) });
  return { input, output, store, report, hashBefore, hashAfter, restoredSame, validation: await validateSession(output), original: await side(input), trimmed: await side(output) };
}

const outcomes = new Map<string, Promise<Outcome>>();
const outcome = (input: string) => {
  if (!outcomes.has(input)) outcomes.set(input, runTrim(input));
  return outcomes.get(input)!;
};

/**
 * Checks every stub of the trimmed file against the original file: it pages in (by its call's
 * id, or the reference it prints) exactly the original payload, checked by the digest the trim
 * recorded; it says the payload's size; and it costs at most a quarter of what it replaced.
 * Returns how many were checked.
 */
async function checkStubs(o: Outcome): Promise<number> {
  const toolUses = new Map<string, Block[]>();
  const toolResults = new Map<string, Block[]>();
  const byUuid = new Map<string, Json>();
  for (const { value } of o.original.lines) {
    if (typeof value.uuid === 'string') byUuid.set(value.uuid, value);
    for (const b of blocksOf(value)) {
      if (b.type === 'tool_use') toolUses.set(String(b.id), [...(toolUses.get(String(b.id)) ?? []), b]);
      if (b.type === 'tool_result') toolResults.set(String(b.tool_use_id), [...(toolResults.get(String(b.tool_use_id)) ?? []), b]);
    }
  }
  const policy = resolvePolicy();
  let checked = 0;
  for (const { line, value } of o.trimmed.lines) {
    for (const stub of findStubs(value)) {
      const where = `${shortName(o.output)}:${line} ${stub.pointer}`;
      const paged = await pageIn(o.store, stub.ref, { files: [o.output] });
      expect(paged.verified, `${where}: no digest vouched for the page-in`).toBe(true);
      let candidates: unknown[];
      if (stub.ref.startsWith('ctxvm:')) {
        // a pack reference (images): something the original line holds
        const original = byUuid.get(String(value.uuid));
        expect(original, where).toBeDefined();
        expect(containsValue(original, paged.content), `${where}: ${stub.ref} pages in something the original line does not hold`).toBe(true);
        candidates = [paged.content];
      } else {
        const [id, field] = stub.ref.split('/');
        candidates = field ? (toolUses.get(id!) ?? []).map((u) => (u.input as Json)[field]) : (toolResults.get(id!) ?? []).map((r) => r.content);
      }
      expect(candidates, `${where}: ${stub.ref} pages in something the original does not hold there`).toContainEqual(paged.content);
      expect(stub.text, where).toMatch(SIZE);
      const orphan = stub.text.includes('whose call is not in this session');
      if (!orphan && !stub.ref.startsWith('ctxvm:')) expect(estimateOf(stub.text), `${where}: the stub costs more than its share`).toBeLessThanOrEqual(policy.maxStubShare * estimateOf(paged.content));
      checked++;
    }
  }
  // and no stub hides anywhere else
  const everywhere = o.trimmed.lines.flatMap(({ value }) => [...strings(value)].filter((s) => s.text.includes(STUB_PREFIX)));
  expect(everywhere.length).toBe(checked);
  return checked;
}

// ───────────────────────────── invariants ─────────────────────────────

describe.skipIf(inputs.length === 0)('trim invariants on every corpus and generated session', () => {
  describe.each(inputs.map((f) => [shortName(f), f] as const))('%s', (_name, input) => {
    it('the output adds no finding (and validates when the input did), restore(trim(x)) is byte-identical to x, and x is untouched', async () => {
      const o = await outcome(input);
      expect(newFindings(o.original.loaded.findings, o.trimmed.loaded.findings).filter((f) => f.severity === 'error')).toEqual([]);
      if (!o.original.loaded.findings.some((f) => f.severity === 'error')) {
        expect(o.report.valid).toBe(true);
        expect(o.validation.errors).toEqual([]);
      }
      // what the input had is reported, each said to be repaired or carried
      expect(o.report.warnings.map((w) => w.rule).sort()).toEqual(o.original.loaded.findings.map((f) => f.rule).sort());
      expect(o.restoredSame).toBe(true);
      expect(o.hashAfter).toBe(o.hashBefore);
    });

    it('every user and assistant text block of the original context is in the trimmed context, verbatim', async () => {
      const o = await outcome(input);
      for (const category of ['userText', 'assistantText'] as const) {
        const left = countBy(textsOf(o.original.loaded, category));
        const extra: string[] = [];
        for (const t of textsOf(o.trimmed.loaded, category)) {
          const n = left.get(t) ?? 0;
          if (n > 0) left.set(t, n - 1);
          else extra.push(t);
        }
        const missing = [...left].filter(([, n]) => n > 0).map(([t]) => t.slice(0, 120));
        expect(missing, `${category} lost or altered`).toEqual([]);
        // the only new text is a stub standing for a pasted image
        expect(extra.filter((t) => !t.replace(/\n$/, '').startsWith(STUB_PREFIX)), `${category} added`).toEqual([]);
      }
    });

    it('tool names and identifying inputs survive (an oversized command by its head); the messages and their roles are the same', async () => {
      const o = await outcome(input);
      const tools = (ctx: ClaudeContext) =>
        ctx.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_use').map((b) => {
          const i = (b.input ?? {}) as Json;
          return [b.id, b.name, i.file_path, i.command, i.pattern];
        }));
      const before = tools(o.original.ctx);
      const after = tools(o.trimmed.ctx);
      // a command that is the bulk of its call becomes a stub quoting the start of its first line
      after.forEach((t, n) => {
        const command = before[n]?.[3];
        if (typeof t[3] !== 'string' || !t[3].startsWith(STUB_PREFIX) || typeof command !== 'string') return;
        const head = t[3].split('\n')[1]!.replace(/…$/, '');
        expect(head.length, `${String(t[0])}: the stub quotes no head`).toBeGreaterThan(0);
        expect(command.split('\n')[0]!.startsWith(head), `${String(t[0])}: the head is not the command's`).toBe(true);
        t[3] = command;
      });
      expect(after).toEqual(before);
      expect(o.trimmed.ctx.messages.map((m) => m.role)).toEqual(o.original.ctx.messages.map((m) => m.role));
    });

    it('stubs are informative and every reference pages in exactly the original payload', async () => {
      const o = await outcome(input);
      const checked = await checkStubs(o);
      const stubbed = o.report.pagedOut.toolResults! + o.report.pagedOut.toolInputs! + o.report.pagedOut.images!;
      if (stubbed > 0) expect(checked).toBeGreaterThan(0);
    });

    it('outside the protected last turns: images paged out, no toolUseResult, no thinking', async () => {
      const o = await outcome(input);
      const from = protectedFromLine(o.original.lines, resolvePolicy().keepLastTurns);
      const protectedUuids = new Set(o.original.lines.filter((l) => l.line >= from).map((l) => l.value.uuid));
      for (const { line, value } of o.trimmed.lines) {
        if (protectedUuids.has(value.uuid)) continue;
        const where = `${shortName(o.output)}:${line}`;
        expect(value.toolUseResult, where).toBeUndefined();
        const blocks = blocksOf(value);
        const thinking = blocks.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
        // a reply made only of thinking that the trim may not remove (a preserved message) keeps
        // it: the agent drops such a reply on resume anyway (resume-model.md §1.7.8)
        if (thinking.length < blocks.length) expect(thinking, where).toEqual([]);
        const inner = blocks.flatMap((b) => (b.type === 'tool_result' && Array.isArray(b.content) ? (b.content as Block[]) : []));
        expect([...blocks, ...inner].filter((b) => b.type === 'image'), where).toEqual([]);
      }
    });

    it('the protected last turn keeps its text, thinking (while a call waits) and all but its largest payloads, byte for byte', async () => {
      const o = await outcome(input);
      const policy = resolvePolicy();
      const from = protectedFromLine(o.original.lines, policy.keepLastTurns);
      const trimmedByUuid = new Map(o.trimmed.lines.filter((l) => typeof l.value.uuid === 'string').map((l) => [l.value.uuid, l] as const));
      // once the last reply ended its turn (it calls no tool), the API takes the tail without its thinking
      const turnEnded = lastReplyEndsTurn(o.original.lines.map((l) => l.value));
      const isThinking = (b: unknown) => ['thinking', 'redacted_thinking'].includes((b as { type?: string } | null)?.type ?? '');
      const plain = (v: Json) => {
        const { parentUuid: _p, ctxvm: _c, ...rest } = v;
        const content = (rest.message as { content?: unknown } | undefined)?.content;
        if (turnEnded && Array.isArray(content) && content.some(isThinking) && !content.every(isThinking)) {
          return { ...rest, message: { ...(rest.message as object), content: content.filter((b) => !isThinking(b)) } };
        }
        return rest;
      };
      for (const l of o.original.lines) {
        if (l.line < from || typeof l.value.uuid !== 'string' || l.value.isSidechain) continue;
        const where = `${shortName(input)}:${l.line}`;
        const t = trimmedByUuid.get(l.value.uuid)!;
        const blocks = (l.value.message as { content?: unknown } | undefined)?.content;
        if (turnEnded && l.value.type === 'assistant' && Array.isArray(blocks) && blocks.length > 0 && blocks.every(isThinking)) {
          expect(t, `${where}: a thinking-only line of an ended turn goes`).toBeUndefined();
          continue;
        }
        expect(t, where).toBeDefined();
        if (t.raw === l.raw) continue;
        // changed only where a payload larger than the tail's threshold became a stub (and by a relink)
        const stubs = findStubs(t.value);
        expect(stubs.length + (t.value.parentUuid !== l.value.parentUuid ? 1 : 0), `${where} changed with no reason`).toBeGreaterThan(0);
        for (const stub of stubs) expect(estimateOf(resolvePointer(l.value, stub.pointer)), where).toBeGreaterThan(policy.tailPayloadTokens);
        const restored = structuredClone(plain(t.value));
        for (const stub of stubs) {
          const segs = stub.pointer.split('/').slice(1);
          let cur = restored as Record<string, unknown>;
          for (const k of segs.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
          cur[segs[segs.length - 1]!] = resolvePointer(l.value, stub.pointer);
        }
        expect(restored, where).toEqual(plain(l.value));
      }
    });

    it('trimmed again (same policy, then a tighter one): same bytes, no larger a context, one restore gives x', async () => {
      const o = await outcome(input);
      const dir = join(root, `retrim-${++caseNo}`);
      await mkdir(dir);
      const same = join(dir, 'same.jsonl');
      const tighter = join(dir, 'tighter.jsonl');
      await trimSession({ input: o.output, output: same, store: o.store, measure: false });
      expect(await sha256(same)).toBe(await sha256(o.output));
      await trimSession({ input: o.output, output: tighter, store: o.store, measure: false, policy: { keepLastTurns: 0, toolResultTokens: 20, toolInputTokens: 20 } });
      const tokens = async (f: string) => countContextTokens((await loadSession(f)).context, counter).tokens;
      expect(await tokens(tighter)).toBeLessThanOrEqual(await tokens(o.output));
      const back = join(dir, 'back.jsonl');
      const trimmed = (await readFile(tighter, 'utf8')).includes('"ctxvm":{');
      const r = await restoreSession({ input: tighter, output: back, store: o.store, allowUntrimmed: !trimmed });
      expect(r.unverified).toBe(0);
      expect(await sha256(back)).toBe(o.hashBefore);
    });

    it('reports sizes and tokens; larger sessions shrink', async () => {
      const o = await outcome(input);
      const bytes = (await readFile(input)).length;
      expect(o.report.input.bytes).toBe(bytes);
      expect(o.report.output.bytes).toBe((await readFile(o.output)).length);
      expect(o.report.reduction).toBeGreaterThanOrEqual(0);
      expect(o.report.reduction).toBeLessThanOrEqual(1);
      if (o.original.ctx.messages.length > 0) expect(o.report.input.tokens).toBeGreaterThan(0);
      // a session whose context holds thousands of tokens of tool payloads, thinking or images shrinks
      const b = o.original.loaded.context ? countContextTokens(o.original.loaded.context, counter).breakdown : undefined;
      const pageable = b ? b.toolResult + b.toolInput + b.thinking + b.image : 0;
      if (bytes >= 50_000 && pageable >= 2000) {
        expect(o.report.reduction).toBeGreaterThan(0);
        expect(o.report.output.tokens).toBeLessThan(o.report.input.tokens!);
      }
    });
  });
});

// ───────────────────────────── policy ─────────────────────────────

/** A payload of about `tokens` o200k tokens of ordinary prose-like text, distinct per `seed`. */
function payload(tokens: number, seed: string): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'kappa', 'sigma', 'omega', 'theta'];
  const out: string[] = [seed];
  for (let i = 0; i < tokens; i++) out.push(words[(i * 7 + seed.length) % words.length]!);
  return out.join(' ');
}

/** u prompt, then one exchange per result: a call and its result, then a closing reply. */
function sessionWith(results: { id: string; name: string; input: Json; content: string; isError?: boolean }[], turnsAfter = 3): Transcript {
  const t = new Transcript();
  t.user('please work');
  for (const [n, r] of results.entries()) {
    t.assistant(`msg_${n}`, toolUse(r.id, r.name, r.input));
    t.results(toolResult(r.id, r.content, r.isError));
  }
  t.assistant('msg_summary', text('all done'));
  // later turns, so the calls above are outside the protected tail
  for (let i = 0; i < turnsAfter; i++) {
    t.user(`follow-up ${i}`);
    t.assistant(`msg_after_${i}`, text(`reply ${i}`));
  }
  return t;
}

async function trimTranscript(t: Transcript, policy: Partial<TrimPolicy> = {}) {
  const dir = join(root, `policy-${++caseNo}`);
  await mkdir(dir);
  const input = await writeTranscript(dir, t);
  const o = await runTrim(input, policy);
  const resultOf = (id: string) => blocksOf(o.trimmed.lines.find(({ value }) => blocksOf(value).some((b) => b.type === 'tool_result' && b.tool_use_id === id))!.value).find((b) => b.tool_use_id === id)!;
  return { ...o, resultOf };
}

const isStub = (b: Block) => typeof b.content === 'string' && b.content.startsWith(STUB_PREFIX);

describe('policy', () => {
  it('threshold: results well under it stay, results over it are paged out; a per-tool rule overrides it', async () => {
    const counter = createTokenCounter();
    const threshold = 200;
    const small = payload(80, 'small');
    const large = payload(600, 'large');
    expect(counter.count(small)).toBeLessThanOrEqual(threshold / 2);
    expect(counter.count(large)).toBeGreaterThan(threshold);
    const t = sessionWith([
      { id: 'toolu_small', name: 'Bash', input: { command: 'echo small' }, content: small },
      { id: 'toolu_large', name: 'Bash', input: { command: 'echo large' }, content: large },
      { id: 'toolu_kept', name: 'Grep', input: { pattern: 'x' }, content: large + ' grep' },
    ]);
    const o = await trimTranscript(t, { toolResultTokens: threshold, tools: { Grep: { keep: true } } });
    expect(o.resultOf('toolu_small').content).toBe(small);
    expect(isStub(o.resultOf('toolu_large'))).toBe(true);
    // the stub does not repeat the call (it is right before it); its id pages the result back in
    expect(o.resultOf('toolu_large').content).not.toContain('echo large');
    expect((await pageIn(o.store, 'toolu_large', { files: [o.output] })).content).toBe(large);
    expect(o.resultOf('toolu_kept').content).toBe(large + ' grep');

    const higher = await trimTranscript(t, { toolResultTokens: 2000 });
    expect(higher.resultOf('toolu_large').content).toBe(large);
  });

  it('keepErrors keeps the current turn\'s is_error results up to the tail\'s threshold, and pages out larger ones with their error line', async () => {
    const big = payload(400, 'stack trace');
    const huge = `${payload(1500, 'build log')}\nerror TS2345: Argument of type 'string' is not assignable\n${payload(1500, 'more log')}`;
    const t = sessionWith([
      { id: 'toolu_err', name: 'Bash', input: { command: 'make' }, content: big, isError: true },
      { id: 'toolu_huge', name: 'Bash', input: { command: 'make all' }, content: huge, isError: true },
    ], 0);
    // the turn goes on after the errors, so they are older than the protected last round trip
    t.assistant('msg_after', text('let me look at the log'));
    const kept = await trimTranscript(t, { keepErrors: true });
    expect(kept.resultOf('toolu_err')).toEqual(toolResult('toolu_err', big, true));
    expect(isStub(kept.resultOf('toolu_huge'))).toBe(true);
    expect(kept.resultOf('toolu_huge').content).toContain('error TS2345');
    expect(kept.resultOf('toolu_huge').is_error).toBe(true);
    const paged = await trimTranscript(t, { keepErrors: false });
    expect(isStub(paged.resultOf('toolu_err'))).toBe(true);
    expect(paged.resultOf('toolu_err').content).toMatch(/error/);
    expect(paged.resultOf('toolu_err').is_error).toBe(true);
  });

  it('keepErrors ends with the turn: an error answered before a newer prompt pages out like any old result', async () => {
    const log = `${payload(300, 'test run')}\nFAILED tests/test_io.py::test_read - AssertionError\n${payload(100, 'summary')}`;
    const t = new Transcript();
    t.user('run the tests');
    t.assistant('msg_run', toolUse('toolu_old', 'Bash', { command: 'pytest' }));
    t.results(toolResult('toolu_old', log, true));
    t.assistant('msg_report', text('one test fails in test_io'));
    t.user('fix it and run them again');
    t.assistant('msg_rerun', toolUse('toolu_now', 'Bash', { command: 'pytest' }));
    t.results(toolResult('toolu_now', log, true));
    t.assistant('msg_look', text('still failing, reading the test'));
    const o = await trimTranscript(t, { keepErrors: true });
    // the failure the person has since answered with a new request goes, its status and error line in the stub
    expect(isStub(o.resultOf('toolu_old'))).toBe(true);
    expect(o.resultOf('toolu_old').is_error).toBe(true);
    expect(o.resultOf('toolu_old').content).toMatch(/^\[ctxvm paged out [^\]]*error/);
    // the same failure in the turn still going on stays whole
    expect(o.resultOf('toolu_now')).toEqual(toolResult('toolu_now', log, true));
  });

  it('keepNewestReadOnly pages out older reads of the same file_path below any threshold, unless a stub would not pay', async () => {
    const v = (n: number) => payload(150, `version ${n}`);
    const t = sessionWith([
      { id: 'toolu_r0', name: 'Read', input: { file_path: '/src/a.ts' }, content: 'v0' },
      { id: 'toolu_r1', name: 'Read', input: { file_path: '/src/a.ts' }, content: v(1) },
      { id: 'toolu_other', name: 'Read', input: { file_path: '/src/b.ts' }, content: v(9) },
      { id: 'toolu_r2', name: 'Read', input: { file_path: '/src/a.ts' }, content: v(2) },
      { id: 'toolu_r3', name: 'Read', input: { file_path: '/src/a.ts' }, content: v(3) },
    ]);
    // a threshold above every read: only supersession pages them out
    const on = await trimTranscript(t, { keepNewestReadOnly: true, toolResultTokens: 2000 });
    for (const id of ['toolu_r1', 'toolu_r2']) {
      expect(isStub(on.resultOf(id)), id).toBe(true);
      expect(on.resultOf(id).content).toMatch(/superseded/);
    }
    // a stub would cost more than a quarter of a two-character read: it stays
    expect(on.resultOf('toolu_r0').content).toBe('v0');
    expect(on.resultOf('toolu_r3').content).toBe(v(3));
    expect(on.resultOf('toolu_other').content).toBe(v(9));
    const off = await trimTranscript(t, { keepNewestReadOnly: false, toolResultTokens: 2000 });
    expect(off.resultOf('toolu_r1').content).toBe(v(1));
  });

  it('keepLastTurns: the last K round trips are left byte-identical, earlier ones are trimmed', async () => {
    const big = (i: number) => payload(600, `result ${i}`);
    const t = new Transcript();
    for (let i = 0; i < 6; i++) {
      t.user(`step ${i}`);
      t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `run ${i}` }));
      t.results(toolResult(`toolu_${i}`, big(i)));
      t.assistant(`msg_${i}_done`, text(`done ${i}`));
    }
    for (const k of [0, 2, 5]) {
      const o = await trimTranscript(t, { keepLastTurns: k, tailPayloadTokens: 0 });
      // step i's call is the 2·(6−i)-th last reply: its result is protected when that call is among the K last replies
      const protectedSteps = new Set(Array.from({ length: 6 }, (_, i) => i).filter((i) => 2 * (6 - i) <= k));
      for (let i = 0; i < 6; i++) expect(isStub(o.resultOf(`toolu_${i}`)), `k=${k} step ${i}`).toBe(!protectedSteps.has(i));
    }
  });

  it('stubs quote command output and searches, but nothing of a view of a file (the call names the file)', async () => {
    const lines = (label: string) => Array.from({ length: 200 }, (_, i) => `${label} line ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`).join('\n');
    const t = sessionWith([
      { id: 'toolu_read', name: 'Read', input: { file_path: '/src/a.ts' }, content: lines('source') },
      { id: 'toolu_edit', name: 'Edit', input: { file_path: '/src/a.ts', old_string: 'a', new_string: 'b' }, content: lines('snippet') },
      { id: 'toolu_bash', name: 'Bash', input: { command: 'npm test' }, content: lines('test') },
      { id: 'toolu_grep', name: 'Grep', input: { pattern: 'lorem' }, content: lines('match') },
      { id: 'toolu_missing', name: 'Read', input: { file_path: '/src/gone.ts' }, content: `${lines('listing')}\nError: file not found`, isError: true },
    ]);
    const o = await trimTranscript(t);
    const content = (id: string) => String(o.resultOf(id).content);
    // the header alone: one line
    for (const id of ['toolu_read', 'toolu_edit']) expect(content(id), id).toMatch(/^\[ctxvm paged out 200 lines[^\n]*\]$/);
    expect(content('toolu_bash')).toContain('test line 199');
    expect(content('toolu_grep')).toContain('match line 0');
    // a failed read still quotes its error line
    expect(content('toolu_missing')).toContain('Error: file not found');
    expect((await pageIn(o.store, 'toolu_read', { files: [o.output] })).content).toBe(lines('source'));
  });

  it('a command that is the bulk of its call pages out behind its first line; short ones and the tail\'s stay; input stubs do not repeat their key', async () => {
    const script = (seed: string) => `python3 - <<'EOF'\n${payload(400, seed).replace(/ /g, '\n')}\nEOF`;
    const t = new Transcript();
    t.user('summarise the logs');
    t.assistant('msg_1', toolUse('toolu_script', 'Bash', { command: script('old'), description: 'Summarise the logs' }));
    t.results(toolResult('toolu_script', 'ok'));
    t.assistant('msg_2', toolUse('toolu_short', 'Bash', { command: 'ls -la /var/log' }));
    t.results(toolResult('toolu_short', 'syslog'));
    t.assistant('msg_2w', toolUse('toolu_write', 'Write', { file_path: '/tmp/notes.md', content: payload(300, 'notes') }));
    t.results(toolResult('toolu_write', 'File created'));
    t.assistant('msg_3', text('summarised'));
    t.user('once more');
    t.assistant('msg_4', toolUse('toolu_tail', 'Bash', { command: script('tail') }));
    t.results(toolResult('toolu_tail', 'ok'));
    const o = await trimTranscript(t);
    const inputOf = (id: string) => o.trimmed.lines.flatMap(({ value }) => blocksOf(value)).find((b) => b.type === 'tool_use' && b.id === id)!.input as Json;
    const stub = String(inputOf('toolu_script').command);
    expect(stub.startsWith(STUB_PREFIX)).toBe(true);
    expect(stub).toMatch(/\d+ lines/);
    // the header says what and how much; the key `command` right before it says which field
    expect(stub.split('\n')[0]).toMatch(/^\[ctxvm paged out [\d,]+ lines\]$/);
    expect(stub.split('\n')[1]).toBe("python3 - <<'EOF'…");
    expect(estimateOf(stub)).toBeLessThanOrEqual(resolvePolicy().maxStubShare * estimateOf(script('old')));
    expect(inputOf('toolu_script').description).toBe('Summarise the logs');
    expect((await pageIn(o.store, 'toolu_script/command', { files: [o.output] })).content).toBe(script('old'));
    expect(inputOf('toolu_short').command).toBe('ls -la /var/log');
    expect(String(inputOf('toolu_write').content)).toMatch(/^\[ctxvm paged out [\d.]+ KB[\] ]/);
    expect(inputOf('toolu_write').file_path).toBe('/tmp/notes.md');
    // the last round trip keeps payloads under the tail's threshold
    expect(inputOf('toolu_tail').command).toBe(script('tail'));
  });

  it('images, thinking and toolUseResult can each be kept', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } };
    const t = new Transcript();
    t.user([text('look at this'), image]);
    t.reply('msg_1', [{ type: 'thinking', thinking: 'considering the picture', signature: 'sig' }, text('a pixel')]);
    t.user('ok');
    t.assistant('msg_2', toolUse('toolu_1', 'Bash', { command: 'ls' }));
    t.user([toolResult('toolu_1', 'a.ts')], { extra: { toolUseResult: { stdout: 'a.ts', stderr: '' } } });
    t.assistant('msg_3', text('listed'));
    for (let i = 0; i < 3; i++) {
      t.user(`more ${i}`);
      t.assistant(`msg_more_${i}`, text(`fine ${i}`));
    }
    const all = await trimTranscript(t);
    const raw = (o: Outcome) => o.trimmed.lines.map((l) => l.raw).join('\n');
    expect(raw(all)).not.toContain(png);
    expect(raw(all)).not.toContain('considering the picture');
    expect(raw(all)).not.toContain('"toolUseResult"');
    const none = await trimTranscript(t, { images: false, thinking: false, toolUseResult: false });
    expect(raw(none)).toContain(png);
    expect(raw(none)).toContain('considering the picture');
    expect(raw(none)).toContain('"toolUseResult"');
  });
});

// ───────────────────────────── failures ─────────────────────────────

describe('failures write nothing', () => {
  let dir: string;
  let store: ObjectStore;
  let good: string;
  beforeAll(async () => {
    dir = join(root, 'failures');
    await mkdir(dir);
    store = createFsObjectStore({ root: join(root, 'failures-objects') });
    good = await writeTranscript(dir, sessionWith([{ id: 'toolu_1', name: 'Bash', input: { command: 'cat big' }, content: payload(600, 'big') }]), 'good.jsonl');
  });

  /** Runs `fn`, expects a CtxvmError, and checks that `out` was not written and no temp file is left. */
  async function rejects(fn: () => Promise<unknown>, out: string): Promise<CtxvmError> {
    const before = new Set(await readdir(dir));
    let error: unknown;
    try {
      await fn();
    } catch (e) {
      error = e;
    }
    expect(CtxvmError.is(error), String(error)).toBe(true);
    const after = (await readdir(dir)).filter((n) => !before.has(n));
    expect(after, 'files left behind').toEqual([]);
    expect(before.has(out.split('/').pop()!)).toBe(false);
    return error as CtxvmError;
  }

  it('a check that reports problems aborts the trim', async () => {
    const out = join(dir, 'checked.jsonl');
    const error = await rejects(
      () => trimClaudeSession({ input: good, output: out, store, policy: resolvePolicy(), tokens: createTokenCounter(), check: async () => ['line 3: tool-result-without-use: made up'] }),
      out,
    );
    expect(error.code).toBe('E_INVALID');
    expect(error.message).toContain('made up');
  });

  it('a malformed line mid-file is E_PARSE naming the file and the line', async () => {
    const lines = (await readFile(good, 'utf8')).split('\n');
    lines.splice(3, 0, '{"type":"user","message":{"role":');
    const input = join(dir, 'malformed.jsonl');
    await writeFile(input, lines.join('\n'));
    const out = join(dir, 'malformed-out.jsonl');
    const error = await rejects(() => trimSession({ input, output: out, store }), out);
    expect(error.code).toBe('E_PARSE');
    expect(error.message).toContain(`${input}:4`);
  });

  it('a truncated last line is E_PARSE and says so', async () => {
    const text = await readFile(good, 'utf8');
    const input = join(dir, 'truncated.jsonl');
    await writeFile(input, text + text.split('\n')[1]!.slice(0, 40));
    const out = join(dir, 'truncated-out.jsonl');
    const error = await rejects(() => trimSession({ input, output: out, store }), out);
    expect(error.code).toBe('E_PARSE');
    expect(error.message).toMatch(/truncated/);
  });

  it('a missing file is E_NOT_FOUND; a directory is E_USAGE; a binary file is E_PARSE', async () => {
    const out = join(dir, 'x-out.jsonl');
    expect((await rejects(() => trimSession({ input: join(dir, 'nope.jsonl'), output: out, store }), out)).code).toBe('E_NOT_FOUND');
    const sub = join(dir, 'a-dir');
    await mkdir(sub);
    expect((await rejects(() => trimSession({ input: sub, output: out, store }), out)).code).toBe('E_USAGE');
    const bin = join(dir, 'binary.jsonl');
    await writeFile(bin, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x0a, 0xff, 0x00]));
    expect((await rejects(() => trimSession({ input: bin, output: out, store }), out)).code).toBe('E_PARSE');
  });

  it('-o equal to the input is refused and the input is untouched', async () => {
    const hash = await sha256(good);
    const error = await rejects(() => trimSession({ input: good, output: good, store }), join(dir, 'never.jsonl'));
    expect(error.code).toBe('E_USAGE');
    expect(await sha256(good)).toBe(hash);
  });
});

describe('exact restore of unusual bytes', () => {
  /** A session whose early turns are trimmed: metadata lines, a big result, thinking, more turns. */
  function trimmable(): string[] {
    const t = sessionWith([{ id: 'toolu_1', name: 'Bash', input: { command: 'cat big' }, content: payload(600, 'big') }], 4);
    const lines = t.text().split('\n').filter(Boolean);
    const snapshot = JSON.stringify({ type: 'file-history-snapshot', messageId: 'm', snapshot: { trackedFileBackups: {} }, isSnapshotUpdate: false });
    // metadata lines (removed by the trim) next to the kept ones
    return [lines[0]!, snapshot, lines[1]!, snapshot, ...lines.slice(2)];
  }

  it.each([
    ['blank lines after removed lines', (ls: string[]) => [ls[0], ls[1], '', '   ', ls[2], ls[3], '', ...ls.slice(4)].join('\n') + '\n'],
    ['non-object JSON lines after removed lines', (ls: string[]) => [ls[0], ls[1], '[]', '42', ls[2], ls[3], 'null', ...ls.slice(4)].join('\n') + '\n'],
    ['CRLF line ends and a BOM', (ls: string[]) => '\ufeff' + ls.join('\r\n') + '\r\n'],
    ['no newline at the end', (ls: string[]) => ls.join('\n')],
    ['a removed line at the very end', (ls: string[]) => [...ls, ls[1]].join('\n') + '\n'],
    ['a blank line, then removed lines at the very end', (ls: string[]) => [...ls, '', ls[1], ls[1]].join('\n') + '\n'],
    ['a non-object JSON line, then a removed line at the very end', (ls: string[]) => [...ls, '"just a string"', ls[1]].join('\n')],
  ])('%s', async (_name, shape) => {
    for (const keepLastTurns of [2, 0]) {
      const dir = join(root, `bytes-${++caseNo}`);
      await mkdir(dir);
      const input = join(dir, 'in.jsonl');
      await writeFile(input, shape(trimmable()));
      const o = await runTrim(input, { keepLastTurns });
      expect(o.report.removedLines).toBeGreaterThan(0);
      expect(o.validation.errors).toEqual([]);
      expect(o.restoredSame, `keepLastTurns ${keepLastTurns}`).toBe(true);
    }
  });
});

describe('trimming twice', () => {
  it.skipIf(generatorSkip !== undefined)('trim(trim(x)) composes: one restore gives back x, and a trim with nothing new to do changes nothing', async () => {
    const dir = join(root, 'twice');
    await mkdir(dir);
    const store = createFsObjectStore({ root: join(dir, 'objects') });
    const x = generateClaudeSession(join(dir, 'x.jsonl'), { turns: 15, seed: 21, compactions: 1, edgeCases: true });
    const once = join(dir, 'once.jsonl');
    const twice = join(dir, 'twice.jsonl');
    const again = join(dir, 'again.jsonl');
    const first = await trimSession({ input: x, output: once, store });
    // the same policy again: nothing new to page out, so the same bytes
    const second = await trimSession({ input: once, output: again, store });
    expect(await sha256(again)).toBe(await sha256(once));
    expect(second.output.tokens).toBe(first.output.tokens);
    // a tighter policy has more to page out, never grows the context, and one restore undoes both
    const tighter = await trimSession({ input: once, output: twice, store, policy: { toolResultTokens: 20, keepLastTurns: 0 } });
    expect(tighter.output.tokens).toBeLessThanOrEqual(first.output.tokens!);
    expect((await validateSession(twice)).errors).toEqual([]);
    const back = await restoreSession({ input: twice, output: join(dir, 'back.jsonl'), store });
    expect(back.levels).toBe(1);
    expect(back.unverified).toBe(0);
    expect(await sha256(join(dir, 'back.jsonl'))).toBe(await sha256(x));
  });
});

/** The last reply of the active agent (not a sidechain, not an API error) has content, calls no tool and is not only thinking. */
function lastReplyEndsTurn(values: Json[]): boolean {
  for (let i = values.length - 1; i >= 0; i--) {
    const v = values[i]!;
    const content = (v.message as { content?: unknown } | undefined)?.content;
    if (v.type !== 'assistant' || v.isSidechain || v.isApiErrorMessage === true || !Array.isArray(content) || content.length === 0) continue;
    const types = content.map((b) => (b as { type?: string }).type);
    return !types.includes('tool_use') && !types.every((t) => t === 'thinking' || t === 'redacted_thinking');
  }
  return false;
}
