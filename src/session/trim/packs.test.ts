/**
 * Page-out packs: many packs per trim (tiny pack sizes), trims giving the same output whatever
 * the pack sizes but for where packs are cut, a branch's packs being its source's, page-in exactness with UUIDs inside a
 * payload, and restore of files trimmed before packs (annotation version 1).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';
import { createTokenCounter } from '../../text/tokens.js';
import { validateSession } from '../session.js';
import { annotationObjects } from './annotation.js';
import { trimClaudeSession } from './claude-trim.js';
import { pageIn } from './page-in.js';
import { resolvePolicy } from './policy.js';
import { restoreSession } from './restore.js';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { claudeMainSessions, generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';
import { containsValue, stubRefsOf } from '../../../test/support/trimmed-session.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-packs-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const generatorSkip = generatorSkipReason();
printSkipReason(generatorSkip);

/** Packs of a few KiB: every trim makes many of them, with runs and lines across their seams. */
const TINY = { minPackBytes: 2048, cutGapBytes: 8192, maxPackBytes: 64 * 1024, minIdBytes: 512 };
const tokens = createTokenCounter();
let n = 0;

async function trim(input: string, store: ObjectStore, packs: Record<string, number> = TINY) {
  const output = join(root, `out-${++n}.jsonl`);
  const stats = await trimClaudeSession({ input, output, store, policy: resolvePolicy(), tokens }, { packs });
  return { output, stats, bytes: await readFile(output) };
}

const stubRefs = stubRefsOf;

async function packsOf(file: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.includes('"ctxvm":{')) continue;
    const a = (JSON.parse(line) as { ctxvm?: { o?: unknown; d?: unknown[]; t?: unknown[] } }).ctxvm;
    for (const p of [a?.o, ...(a?.d ?? []), ...(a?.t ?? [])]) if (Array.isArray(p)) out.add(String(p[0]));
  }
  return out;
}

const inputs = generatorSkip
  ? claudeMainSessions().slice(0, 3)
  : [
      generateClaudeSession(join(root, 'gen-3.jsonl'), { turns: 40, seed: 31, compactions: 3, edgeCases: true }),
      generateClaudeSession(join(root, 'gen-0.jsonl'), { turns: 25, seed: 32, compactions: 0, edgeCases: true, images: true }),
      ...claudeMainSessions().slice(0, 2),
    ];

describe.skipIf(inputs.length === 0)('trims into many packs', () => {
  it.each(inputs.map((f) => [f.split('/').pop()!, f] as const))('%s: the same output again, exact restore, every stub pages in', async (_name, input) => {
    const store = createFsObjectStore({ root: join(root, `objects-${++n}`) });
    const read = await trim(input, store);
    const again = await trim(input, createFsObjectStore({ root: join(root, `objects-${++n}`) }));
    expect(again.bytes.equals(read.bytes)).toBe(true);
    expect(read.stats.objects).toBeGreaterThan(1);
    expect((await validateSession(read.output)).errors).toEqual([]);
    const back = join(root, `back-${++n}.jsonl`);
    await restoreSession({ input: read.output, output: back, store });
    expect((await readFile(back)).equals(await readFile(input))).toBe(true);
    for (const { ref, original } of await stubRefs(input, read.output)) {
      const paged = await pageIn(store, ref, { files: [read.output] });
      expect(containsValue(original, paged.content), ref).toBe(true);
    }
    // every object an annotation names is held by the trim
    for (const hash of await packsOf(read.output)) expect(await store.holders(hash)).toContain(read.stats.holder);
    // packs sealed early because output waits (here: after every line) change cut points only
    const eager = await trim(input, store, { ...TINY, maxWaitingBytes: 1 });
    const eagerBack = join(root, `back-${++n}.jsonl`);
    await restoreSession({ input: eager.output, output: eagerBack, store });
    expect((await readFile(eagerBack)).equals(await readFile(input))).toBe(true);
    for (const { ref, original } of await stubRefs(input, eager.output)) expect(containsValue(original, (await pageIn(store, ref, { files: [eager.output] })).content), ref).toBe(true);
  });
});

describe('lifted originals', () => {
  it('a copy with new ids on every line pages out to the same packs', async () => {
    const t = new Transcript();
    for (let i = 0; i < 30; i++) {
      t.user(`question ${i}`);
      t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat file-${i}` }));
      t.results(toolResult(`toolu_${i}`, Array.from({ length: 80 }, (_, k) => `line ${k} of file ${i}`).join('\n')));
      t.assistant(`msg_${i}b`, text(`done ${i}`));
    }
    const source = await writeTranscript(root, t, 'lift-source.jsonl');
    // what a branch does to every line: new session id, new uuids (references follow)
    let body = await readFile(source, 'utf8');
    const ids = new Set(body.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g));
    for (const id of ids) body = body.split(id).join(randomUUID());
    const copy = join(root, 'lift-copy.jsonl');
    await writeFile(copy, body);
    const store = createFsObjectStore({ root: join(root, 'objects-lift') });
    const policy = { toolResultTokens: 50, keepLastTurns: 1 };
    const a = join(root, 'lift-a.jsonl');
    const b = join(root, 'lift-b.jsonl');
    await trimClaudeSession({ input: source, output: a, store, policy: resolvePolicy(policy), tokens }, { packs: TINY });
    await trimClaudeSession({ input: copy, output: b, store, policy: resolvePolicy(policy), tokens }, { packs: TINY });
    const packsA = await packsOf(a);
    expect(packsA.size).toBeGreaterThan(3);
    expect([...(await packsOf(b))].sort()).toEqual([...packsA].sort());
    // and each restores to its own bytes, ids and all
    await restoreSession({ input: b, output: join(root, 'lift-b-back.jsonl'), store });
    expect(await readFile(join(root, 'lift-b-back.jsonl'), 'utf8')).toBe(body);
  });

  it('pages in a payload holding the session ids exactly (content is never lifted)', async () => {
    const t = new Transcript();
    t.user('list the sessions');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls ~/.claude/projects' }));
    const listing = Array.from({ length: 60 }, (_, i) => `${t.nextUuid()}.jsonl  session ${i}`).join('\n');
    t.results(toolResult('toolu_1', listing));
    for (let i = 2; i < 6; i++) {
      t.assistant(`msg_${i}`, text(`answer ${i}`));
      t.user(`question ${i}`);
    }
    t.assistant('msg_9', text('the end'));
    const input = await writeTranscript(root, t, 'ids-in-payload.jsonl');
    const store = createFsObjectStore({ root: join(root, 'objects-ids') });
    const out = join(root, 'ids-in-payload-trimmed.jsonl');
    await trimClaudeSession({ input, output: out, store, policy: resolvePolicy(), tokens });
    const refs = await stubRefs(input, out);
    expect(refs.length).toBe(1);
    expect((await pageIn(store, refs[0]!.ref, { files: [out] })).text).toBe(listing);
  });
});

describe('files trimmed before packs (annotation version 1)', () => {
  it('restore and page-in still work', async () => {
    const dir = join(root, 'v1');
    await mkdir(dir);
    const store = createFsObjectStore({ root: join(dir, 'objects') });
    const lines = [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: 'hi' } },
      { type: 'file-history-snapshot', messageId: 'm1', snapshot: {} },
      { type: 'assistant', uuid: 'a1', parentUuid: 'u1', message: { role: 'assistant', id: 'msg_1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] } },
      { type: 'user', uuid: 'u2', parentUuid: 'a1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a long listing' }] } },
    ].map((l) => JSON.stringify(l) + '\n');
    const original = join(dir, 'original.jsonl');
    await writeFile(original, lines.join(''));
    // the v1 layout: one object per original line, one per removed run
    const run = (await store.put(lines[1]!)).hash;
    const orig = (await store.put(lines[3]!)).hash;
    const stub = `[ctxvm paged out: tool result · Bash]\npage in: ctxvm session page-in ctxvm:${orig.slice(0, 16)}#/message/content/0/content`;
    const changed = { ...JSON.parse(lines[3]!), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: stub }] }, ctxvm: { v: 1, o: orig } };
    const spliced = `${lines[2]!.trimEnd().slice(0, -1)},"ctxvm":${JSON.stringify({ v: 1, d: run, a: 1 })}}\n`;
    const trimmed = join(dir, 'trimmed.jsonl');
    await writeFile(trimmed, lines[0]! + spliced + JSON.stringify(changed) + '\n');
    const back = join(dir, 'back.jsonl');
    expect((await restoreSession({ input: trimmed, output: back, store })).wasTrimmed).toBe(true);
    expect(await readFile(back, 'utf8')).toBe(lines.join(''));
    expect((await pageIn(store, `ctxvm:${orig.slice(0, 16)}#/message/content/0/content`)).text).toBe('a long listing');
    expect(annotationObjects({ v: 1, o: orig, d: [run] }).sort()).toEqual([orig, run].sort());
  });

  it('lists every object a version 2 annotation names, packs and id objects', () => {
    const h = (s: string) => createHash('sha256').update(s).digest('hex');
    const ann = { v: 2, o: [h('p1'), 0, 10, h('i1'), 0, 16], d: [[h('p2'), 5, 7]], t: [[h('p3'), 0, 1, h('i2'), 16, 32]] };
    expect(annotationObjects(ann).sort()).toEqual([h('p1'), h('i1'), h('p2'), h('p3'), h('i2')].sort());
  });
});
