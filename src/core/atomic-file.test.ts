import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, rm, readFile, readdir, writeFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic, withAtomicWriter, createAtomicWriter, cleanupStaleTempFiles } from './atomic-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-atomic-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('atomic file writes', () => {
  it('creates parent folders and replaces the target in one step', async () => {
    const p = join(dir, 'a', 'b', 'file.txt');
    await writeFileAtomic(p, 'one');
    await writeFileAtomic(p, 'two');
    expect(await readFile(p, 'utf8')).toBe('two');
    expect(await readdir(join(dir, 'a', 'b'))).toEqual(['file.txt']);
  });

  it('withAtomicWriter leaves the old file when the producer throws', async () => {
    const p = join(dir, 'f.txt');
    await writeFile(p, 'old');
    await expect(
      withAtomicWriter(p, async (w) => {
        await w.write('partial');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await readFile(p, 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['f.txt']);
  });

  it('buffers many small writes and large ones in order', async () => {
    const p = join(dir, 'big.bin');
    const w = await createAtomicWriter(p);
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await w.write('head:');
    await w.write(big);
    for (let i = 0; i < 1000; i++) await w.write(String(i % 10));
    await w.commit();
    const out = await readFile(p);
    expect(out.length).toBe(5 + big.length + 1000);
    expect(out.subarray(0, 5).toString()).toBe('head:');
    expect(out[5 + big.length - 1]).toBe(7);
    expect(out.subarray(out.length - 3).toString()).toBe('789');
    expect(w.bytesWritten).toBe(out.length);
  });

  it('cleans up only stale temp files', async () => {
    const stale = join(dir, '.x.jsonl.abc.tmp');
    const fresh = join(dir, '.y.jsonl.def.tmp');
    await writeFile(stale, '');
    await writeFile(fresh, '');
    await writeFile(join(dir, 'keep.tmp'), '');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(stale, old, old);
    expect(await cleanupStaleTempFiles(dir, 60_000)).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(['.y.jsonl.def.tmp', 'keep.tmp']);
  });
});
