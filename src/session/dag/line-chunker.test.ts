import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_AVG_BYTES, CHUNK_MAX_BYTES, CHUNK_MIN_BYTES, LineChunker } from './line-chunker.js';

/** JSONL-like content: lines of varied length with random payloads. */
function jsonl(lines: number, seed = 1): Buffer {
  let s = seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const len = Math.floor(rnd() < 0.1 ? rnd() * 40_000 : rnd() * 2_000);
    out.push(JSON.stringify({ i, uuid: `${i}-${Math.floor(rnd() * 1e9)}`, text: randomBytes(Math.ceil(len / 2)).toString('hex').slice(0, len) }));
  }
  return Buffer.from(out.join('\n') + '\n');
}

/** Chunk end offsets of `data` fed in blocks of `block` bytes. */
function cutsOf(data: Buffer, block: number): number[] {
  const chunker = new LineChunker();
  const cuts: number[] = [];
  for (let at = 0; at < data.length; at += block) {
    for (const c of chunker.push(data.subarray(at, at + block))) cuts.push(at + c);
  }
  return cuts;
}

describe('LineChunker', () => {
  const data = jsonl(3000);

  it('cuts only just after a newline, within the size limits except for long lines', () => {
    const cuts = cutsOf(data, 1 << 20);
    expect(cuts.length).toBeGreaterThan(10);
    let prev = 0;
    for (const c of cuts) {
      expect(data[c - 1]).toBe(0x0a);
      const size = c - prev;
      expect(size).toBeGreaterThanOrEqual(CHUNK_MIN_BYTES);
      // a forced cut waits for the end of the current line
      const lineEnd = data.indexOf(0x0a, prev + CHUNK_MAX_BYTES - 1);
      if (lineEnd !== -1) expect(c).toBeLessThanOrEqual(lineEnd + 1);
      prev = c;
    }
    const avg = cuts[cuts.length - 1]! / cuts.length;
    expect(avg).toBeGreaterThan(CHUNK_AVG_BYTES * 0.6);
    expect(avg).toBeLessThan(CHUNK_AVG_BYTES * 1.6);
  });

  it('finds the same cuts whatever the block size', () => {
    const reference = cutsOf(data, 1 << 20);
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 1, max: 64 }).map((n) => n * 997), fc.integer({ min: 65_536, max: 300_000 })), (block) => {
        expect(cutsOf(data, block)).toEqual(reference);
      }),
      { numRuns: 15 },
    );
  });

  it('keeps every earlier cut when the file grows (append-only sessions share chunks)', () => {
    const whole = cutsOf(data, 65_536);
    const prefix = data.subarray(0, data.lastIndexOf(0x0a, Math.floor(data.length * 0.6)) + 1);
    const partial = cutsOf(prefix, 65_536);
    expect(whole.slice(0, partial.length)).toEqual(partial);
  });

  it('resynchronises after an edit in the middle', () => {
    const lines = data.toString().split('\n');
    lines[1000] = JSON.stringify({ edited: true, text: 'x'.repeat(500) });
    const edited = Buffer.from(lines.join('\n'));
    // compare cut points by line number, since the edit shifted byte offsets
    const lineNumbers = (buf: Buffer, cuts: number[]) => {
      let line = 0;
      let at = 0;
      return cuts.map((c) => {
        for (let nl = buf.indexOf(0x0a, at); nl !== -1 && nl < c; nl = buf.indexOf(0x0a, nl + 1)) line++;
        at = c;
        return line;
      });
    };
    const a = new Set(lineNumbers(data, cutsOf(data, 1 << 20)));
    const b = lineNumbers(edited, cutsOf(edited, 1 << 20));
    const shared = b.filter((lineNo) => a.has(lineNo)).length;
    expect(shared / b.length).toBeGreaterThan(0.8);
  });

  it('makes one chunk of a line longer than the maximum', () => {
    const long = Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(CHUNK_MAX_BYTES * 3, 0x61), Buffer.from('"}\n'), jsonl(200)]);
    const cuts = cutsOf(long, 100_000);
    expect(cuts[0]).toBe(long.indexOf(0x0a) + 1);
  });

  it('rejects inconsistent sizes', () => {
    expect(() => new LineChunker({ minBytes: 10, avgBytes: 8, maxBytes: 100 })).toThrow(RangeError);
    expect(() => new LineChunker({ avgBytes: 1000 })).toThrow(RangeError);
  });
});
