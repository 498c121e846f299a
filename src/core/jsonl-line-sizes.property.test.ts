/**
 * Lines of every size are read back exactly by every reader: sizes from 1 byte to 3x the read
 * block, around each block boundary, and one 64 MiB line, with a consumer that holds lines the
 * way the trimmer does (a one-line look-ahead across batches, and lines of the last two batches).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, READ_BLOCK_BYTES, readLineBatches, readLines, type RawLine } from './jsonl.js';
import { ParseError } from '../errors.js';
import { constants } from 'node:buffer';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-line-sizes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Expected {
  line: number;
  byteOffset: number;
  digest: string;
  length: number;
}

const digestOf = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A line of `size` bytes whose content depends on its number (so a swapped line shows). */
function lineBytes(n: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  const tag = `#${n}:`;
  for (let i = 0; i < size; i++) b[i] = i < tag.length ? tag.charCodeAt(i) : 0x61 + ((n * 7 + i) % 26);
  return b;
}

async function writeLines(name: string, sizes: number[]): Promise<{ path: string; expected: Expected[] }> {
  const parts: Buffer[] = [];
  const expected: Expected[] = [];
  let offset = 0;
  sizes.forEach((size, i) => {
    const bytes = lineBytes(i + 1, size);
    expected.push({ line: i + 1, byteOffset: offset, digest: digestOf(bytes), length: size });
    parts.push(bytes, Buffer.from('\n'));
    offset += size + 1;
  });
  const path = join(dir, name);
  await writeFile(path, Buffer.concat(parts));
  return { path, expected };
}

function check(raw: RawLine, expected: Expected[]): void {
  const e = expected[raw.line - 1]!;
  expect({ line: raw.line, byteOffset: raw.byteOffset, length: raw.bytes.length }).toEqual({ line: e.line, byteOffset: e.byteOffset, length: e.length });
  expect(digestOf(raw.bytes), `line ${raw.line}`).toBe(e.digest);
}

/** Reads batches holding lines as long as the reader promises: the look-ahead and the two batches before. */
async function readHolding(path: string, expected: Expected[], blockBytes: number, reuseBuffers: boolean): Promise<number> {
  let seen = 0;
  let previous: RawLine | undefined;
  const held: RawLine[][] = [];
  for await (const batch of readLineBatches(path, { reuseBuffers, blockBytes })) {
    for (const raw of batch) {
      if (previous) check(previous, expected);
      previous = raw;
      seen++;
    }
    for (const old of held) for (const raw of old) check(raw, expected);
    held.push(batch);
    if (held.length > 2) held.shift();
  }
  if (previous) check(previous, expected);
  return seen;
}

async function readOneByOne(path: string, expected: Expected[], blockBytes: number): Promise<number> {
  let seen = 0;
  for await (const raw of readLines(path, { blockBytes })) {
    check(raw, expected);
    seen++;
  }
  return seen;
}

describe('line sizes around read-block boundaries', () => {
  const block = 64;
  const boundary = fc.oneof(
    fc.integer({ min: 1, max: 3 * block }),
    fc.constantFrom(1, block - 1, block, block + 1, 2 * block - 1, 2 * block, 2 * block + 1, 3 * block - 1, 3 * block),
  );

  it('every reader returns each line with its own bytes, number and offset', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(boundary, { minLength: 1, maxLength: 40 }), async (sizes) => {
        const { path, expected } = await writeLines(`p${run++}.jsonl`, sizes);
        expect(await readHolding(path, expected, block, true)).toBe(sizes.length);
        expect(await readHolding(path, expected, block, false)).toBe(sizes.length);
        expect(await readOneByOne(path, expected, block)).toBe(sizes.length);
      }),
      { numRuns: 300 },
    );
  });

  it('holds at the real block size: lines of 1 byte to 3x the block, and one of 64 MiB', async () => {
    const B = READ_BLOCK_BYTES;
    const sizes = [10, B - 1, 10, B, 10, B + 1, 10, 2 * B + 1, 10, 3 * B - 1, 10, 3 * B, 10, 3 * B + 1, 10, 64 * 1024 * 1024, 10, 1];
    const { path, expected } = await writeLines('real.jsonl', sizes);
    expect(await readHolding(path, expected, B, true)).toBe(sizes.length);
    expect(await readOneByOne(path, expected, B)).toBe(sizes.length);
  }, 60_000);
});

describe('a line longer than the limit', () => {
  it('is refused by file, number and size by every reader, never reported as another line', async () => {
    const { path } = await writeLines('too-long.jsonl', [10, 50, 1000, 10]);
    const readers: [string, () => Promise<unknown>][] = [
      ['batches, reused buffers', async () => { for await (const _ of readLineBatches(path, { reuseBuffers: true, blockBytes: 64, maxLineBytes: 100 })); }],
      ['batches', async () => { for await (const _ of readLineBatches(path, { blockBytes: 64, maxLineBytes: 100 })); }],
      ['lines', async () => { for await (const _ of readLines(path, { blockBytes: 64, maxLineBytes: 100 })); }],
    ];
    for (const [, read] of readers) {
      const error = await read().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ParseError);
      expect((error as ParseError).line).toBe(3);
      expect((error as ParseError).byteOffset).toBe(62);
      expect((error as ParseError).message).toMatch(/too-long\.jsonl:3: line longer than 100 bytes \(at least \d+ bytes without a newline\)/);
    }
  });

  it('defaults to the longest string the runtime holds', () => {
    expect(MAX_LINE_BYTES).toBe(constants.MAX_STRING_LENGTH);
  });
});
