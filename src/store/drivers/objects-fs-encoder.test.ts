import { createHash, randomBytes } from 'node:crypto';
import { brotliDecompressSync, constants } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { OffThreadEncoder, releasePayload } from './objects-fs-encoder.js';

const BROTLI_FAST = { codec: 'brotli', level: constants.BROTLI_MIN_QUALITY } as const;

describe('OffThreadEncoder', () => {
  it('gives back the hash and a payload that decodes to the input, which releasePayload frees', async () => {
    const encoder = new OffThreadEncoder();
    const input = Buffer.from('{"type":"tool_result","content":"a line of output"}\n'.repeat(40_000));
    const first = await encoder.encode(input, BROTLI_FAST);
    expect(first.hash).toBe(createHash('sha256').update(input).digest('hex'));
    expect(Buffer.compare(brotliDecompressSync(first.payload!), input)).toBe(0);
    releasePayload(first.payload!);
    // the memory moved away: this view of it is empty now
    expect(first.payload!.length).toBe(0);
    // and the thread goes on: a payload larger than one output chunk (random bytes do not shrink)
    const random = Buffer.concat([input, randomBytes(3 << 19)]);
    const second = await encoder.encode(random, BROTLI_FAST);
    expect(second.payload!.length).toBeGreaterThan(1 << 20);
    expect(Buffer.compare(brotliDecompressSync(second.payload!), random)).toBe(0);
    releasePayload(second.payload!);
    expect(second.payload!.length).toBe(0);
  });
});
