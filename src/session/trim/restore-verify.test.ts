/**
 * Restore and page-in check what they rebuild against the digests a trim recorded: an edited
 * annotation or line is refused (nothing written, the line named), a reference whose offset was
 * changed is refused, and annotations of earlier builds (no digests) still restore, reported as
 * unverified.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CtxvmError } from '../../errors.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';
import { trimSession } from '../session.js';
import { pageIn } from './page-in.js';
import { restoreSession } from './restore.js';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-restore-verify-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let store: ObjectStore;
let input: string;
let trimmed: string;
let lines: string[];

beforeAll(async () => {
  store = createFsObjectStore({ root: join(root, 'objects') });
  const t = new Transcript();
  t.user('look at the logs');
  for (let i = 0; i < 3; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat log-${i}` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: 200 }, (_, k) => `log ${i} line ${k}`).join('\n')));
  }
  t.assistant('msg_end', text('read them all'));
  t.user('thanks');
  t.assistant('msg_bye', text('bye'));
  input = await writeTranscript(root, t, 'in.jsonl');
  // a metadata line the trim removes: the unchanged prompt after it carries the run (`a: 1`)
  const body = (await readFile(input, 'utf8')).split('\n');
  body.splice(body.length - 3, 0, JSON.stringify({ type: 'file-history-snapshot', messageId: 'm', snapshot: { trackedFileBackups: {} }, isSnapshotUpdate: false }));
  await writeFile(input, body.join('\n'));
  trimmed = join(root, 'trimmed.jsonl');
  await trimSession({ input, output: trimmed, store, measure: false });
  lines = (await readFile(trimmed, 'utf8')).split('\n');
});

/** The index of the first line whose annotation has field `key`. */
const annotated = (key: string) => lines.findIndex((l) => l.includes('"ctxvm":{') && (JSON.parse(l) as { ctxvm: Record<string, unknown> }).ctxvm[key] !== undefined);

async function refused(file: string): Promise<CtxvmError> {
  const out = join(root, `never-${Math.random().toString(36).slice(2)}.jsonl`);
  let error: unknown;
  try {
    await restoreSession({ input: file, output: out, store });
  } catch (e) {
    error = e;
  }
  expect(CtxvmError.is(error), String(error)).toBe(true);
  expect(existsSync(out)).toBe(false);
  return error as CtxvmError;
}

describe('restore verifies every original it rebuilds', () => {
  it('a file of this build restores with every part vouched for', async () => {
    const r = await restoreSession({ input: trimmed, output: join(root, 'back.jsonl'), store });
    expect(r.unverified).toBe(0);
    expect(await readFile(join(root, 'back.jsonl'))).toEqual(await readFile(input));
  });

  it('one changed digit of an offset in an annotation is refused, naming the line', async () => {
    const i = annotated('o');
    expect(i).toBeGreaterThanOrEqual(0);
    const value = JSON.parse(lines[i]!) as { ctxvm: { o: unknown[] } };
    value.ctxvm.o[1] = (value.ctxvm.o[1] as number) + 1;
    const edited = [...lines];
    edited[i] = JSON.stringify(value);
    const file = join(root, 'edited-offset.jsonl');
    await writeFile(file, edited.join('\n'));
    const e = await refused(file);
    expect(e.code).toBe('E_PARSE');
    expect(e.message).toContain(`${file}:${i + 1}`);
  });

  it('a line edited after the trim is refused', async () => {
    const i = annotated('a');
    expect(i).toBeGreaterThanOrEqual(0);
    const edited = [...lines];
    edited[i] = `{"edited":true,${edited[i]!.slice(1)}`;
    const file = join(root, 'edited-line.jsonl');
    await writeFile(file, edited.join('\n'));
    const e = await refused(file);
    expect(e.code).toBe('E_PARSE');
    expect(e.message).toMatch(/differs from the original/);
  });

  it('annotations without digests (version 2) still restore, counted as unverified', async () => {
    const v2 = lines.map((l) => {
      if (!l.includes('"ctxvm":{')) return l;
      const value = JSON.parse(l) as { ctxvm: Record<string, unknown> };
      const a = value.ctxvm;
      if (a.a) return l; // an appended annotation would need re-splicing: leave those at version 3
      const strip = (p: unknown[]) => (p.length === 4 || p.length === 7 ? p.slice(0, -1) : p);
      a.v = 2;
      if (Array.isArray(a.o)) a.o = strip(a.o);
      for (const k of ['d', 't']) if (Array.isArray(a[k])) a[k] = (a[k] as unknown[][]).map(strip);
      return JSON.stringify(value);
    });
    const file = join(root, 'v2.jsonl');
    await writeFile(file, v2.join('\n'));
    const r = await restoreSession({ input: file, output: join(root, 'back-v2.jsonl'), store });
    expect(r.unverified).toBeGreaterThan(0);
    expect(await readFile(join(root, 'back-v2.jsonl'))).toEqual(await readFile(input));
  });

  it('a file with no annotation is refused unless asked to copy it', async () => {
    const e = await refused(input);
    expect(e.code).toBe('E_USAGE');
    const r = await restoreSession({ input, output: join(root, 'copy.jsonl'), store, allowUntrimmed: true });
    expect(r.wasTrimmed).toBe(false);
  });
});

describe('page-in verifies what it returns', () => {
  it('by call id: the digest vouches for the original', async () => {
    const p = await pageIn(store, 'toolu_0', { files: [trimmed] });
    expect(p.verified).toBe(true);
    expect(p.text).toContain('log 0 line 199');
  });

  it('by call id, through an annotation whose offset was changed: refused', async () => {
    const i = lines.findIndex((l) => l.includes('"toolu_1"') && l.includes('"ctxvm":{') && l.includes('"tool_result"'));
    const value = JSON.parse(lines[i]!) as { ctxvm: { o: unknown[] } };
    value.ctxvm.o[1] = (value.ctxvm.o[1] as number) + 3;
    const edited = [...lines];
    edited[i] = JSON.stringify(value);
    const file = join(root, 'edited-for-page-in.jsonl');
    await writeFile(file, edited.join('\n'));
    await expect(pageIn(store, 'toolu_1', { files: [file] })).rejects.toMatchObject({ code: 'E_INTEGRITY' });
  });

  it('by a pack reference whose offset does not start a line: refused', async () => {
    const i = annotated('o');
    const o = (JSON.parse(lines[i]!) as { ctxvm: { o: [string, number] } }).ctxvm.o;
    const good = await pageIn(store, `ctxvm:${o[0].slice(0, 16)}#${o[1]}/message`);
    expect(good.kind).toBe('json');
    await expect(pageIn(store, `ctxvm:${o[0].slice(0, 16)}#${o[1] + 5}/message`)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
  });
});
