import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UuidLiftDecoder, UuidLiftEncoder, UuidLiftError } from './uuid-lift.js';

function encode(data: Buffer, block: number): { text: Buffer; uuids: Buffer } {
  const enc = new UuidLiftEncoder();
  const text: Buffer[] = [];
  const uuids: Buffer[] = [];
  for (let at = 0; at < data.length; at += block) {
    const r = enc.push(data.subarray(at, at + block));
    text.push(r.text);
    uuids.push(r.uuids);
  }
  const r = enc.end();
  text.push(r.text);
  uuids.push(r.uuids);
  return { text: Buffer.concat(text), uuids: Buffer.concat(uuids) };
}

async function decode(text: Buffer, uuids: Buffer, block: number, uuidBlock = 64): Promise<Buffer> {
  let at = 0;
  const dec = new UuidLiftDecoder(async () => {
    if (at >= uuids.length) return undefined;
    const piece = uuids.subarray(at, at + uuidBlock);
    at += uuidBlock;
    return piece;
  });
  const out: Buffer[] = [];
  for (let i = 0; i < text.length; i += block) out.push(await dec.push(text.subarray(i, i + block)));
  await dec.end();
  return Buffer.concat(out);
}

const line = (sessionId: string, uuid: string, parent: string | null) =>
  JSON.stringify({ parentUuid: parent, sessionId, type: 'user', message: { role: 'user', content: 'hello \u0001 world' }, uuid }) + '\n';

describe('uuid-lift', () => {
  it('round-trips any bytes, whatever the block sizes (property)', async () => {
    const piece = fc.oneof(
      fc.uint8Array({ maxLength: 50 }).map((a) => Buffer.from(a)),
      fc.constant(Buffer.from(randomUUID())),
      fc.constantFrom(Buffer.from([1]), Buffer.from([2]), Buffer.from([2, 1]), Buffer.from('\n'), Buffer.from('-')),
      fc.string({ unit: fc.constantFrom('0', 'a', 'f', '-', '9') }).map((s) => Buffer.from(s)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 1, max: 80 }), fc.integer({ min: 1, max: 80 }), async (pieces, b1, b2) => {
        const data = Buffer.concat(pieces);
        const { text, uuids } = encode(data, b1);
        expect(uuids.length % 16).toBe(0);
        expect((await decode(text, uuids, b2, 16 * ((b2 % 3) + 1))).equals(data)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('gives a session and its id-rewritten copy the same text stream', () => {
    const [s1, s2] = [randomUUID(), randomUUID()];
    const ids1 = Array.from({ length: 50 }, () => randomUUID());
    const ids2 = Array.from({ length: 50 }, () => randomUUID());
    const a = Buffer.from(ids1.map((u, i) => line(s1, u, i ? ids1[i - 1]! : null)).join(''));
    const b = Buffer.from(ids2.map((u, i) => line(s2, u, i ? ids2[i - 1]! : null)).join(''));
    const ea = encode(a, 1000);
    const eb = encode(b, 333);
    expect(ea.text.equals(eb.text)).toBe(true);
    expect(ea.uuids.equals(eb.uuids)).toBe(false);
    expect(ea.uuids.length).toBe(16 * (50 * 2 + 49));
  });

  it('leaves uppercase UUIDs in the text (only exact lowercase ones are lifted)', () => {
    const upper = randomUUID().toUpperCase();
    expect(encode(Buffer.from(upper), 7).text.toString()).toBe(upper);
  });

  it('fails when the side stream is short or too long', async () => {
    const data = Buffer.from(`${randomUUID()} and ${randomUUID()}`);
    const { text, uuids } = encode(data, 100);
    await expect(decode(text, uuids.subarray(0, 16), 100)).rejects.toBeInstanceOf(UuidLiftError);
    await expect(decode(text, Buffer.concat([uuids, Buffer.alloc(16)]), 100)).rejects.toBeInstanceOf(UuidLiftError);
  });
});
