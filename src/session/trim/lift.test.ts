import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteBuffer } from '../../core/byte-buffer.js';
import { contentRegions, liftLineInto, unlift } from './lift.js';

function lift(line: Buffer, bom = false, eol = '\n'): { text: Buffer; ids: Buffer } {
  const text = new ByteBuffer(16);
  const ids = new ByteBuffer(16);
  liftLineInto(line, bom, eol, text, ids);
  return { text: Buffer.from(text.view()), ids: Buffer.from(ids.view()) };
}

function back(text: Buffer, ids?: Buffer): Buffer {
  const out = new ByteBuffer(16);
  unlift(text, ids, out);
  return Buffer.from(out.view());
}

const uuid = fc.uuid().map((u) => u.toLowerCase());

describe('lifted lines', () => {
  it('round-trip any bytes, with or without a BOM and a terminator (property)', () => {
    const piece = fc.oneof(uuid, fc.string(), fc.constantFrom('\u0001', '\u0002', '-', '{"message":', '}', '"'), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('latin1')));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), fc.boolean(), fc.constantFrom('', '\n', '\r\n'), (pieces, bom, eol) => {
        const line = Buffer.from(pieces.join('').replace(/[\r\n]/g, ' '), 'latin1');
        const { text, ids } = lift(line, bom, eol);
        const expected = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), line, Buffer.from(eol)]);
        expect(back(text, ids).equals(expected)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('round-trip JSON lines with UUIDs anywhere (property)', () => {
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, uuid, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('v'), { maxKeys: 3 })),
    })).v;
    fc.assert(
      fc.property(uuid, uuid, value, value, (sessionId, id, message, other) => {
        const line = Buffer.from(JSON.stringify({ parentUuid: null, sessionId, message, uuid: id, toolUseResult: other, x: other }));
        const { text, ids } = lift(line);
        expect(back(text, ids).equals(Buffer.concat([line, Buffer.from('\n')]))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('move ids out of bookkeeping only: content comes back exact without them', () => {
    const inContent = randomUUID();
    const line = (session: string, self: string) =>
      Buffer.from(JSON.stringify({ parentUuid: null, sessionId: session, type: 'user', message: { role: 'user', content: `see ${inContent}` }, uuid: self, toolUseResult: { id: inContent } }));
    const a = lift(line(randomUUID(), randomUUID()));
    const b = lift(line(randomUUID(), randomUUID()));
    // a branch's line (new session id and uuid) lifts to the same bytes
    expect(a.text.equals(b.text)).toBe(true);
    expect(a.ids.length).toBe(32);
    const pagedIn = JSON.parse(back(a.text).toString('utf8')) as { sessionId: string; message: { content: string }; toolUseResult: { id: string } };
    expect(pagedIn.message.content).toBe(`see ${inContent}`);
    expect(pagedIn.toolUseResult.id).toBe(inContent);
    expect(pagedIn.sessionId).toBe('00000000-0000-0000-0000-000000000000');
  });

  it('finds the content ranges of a line, and none in what is not an object', () => {
    const line = Buffer.from('{"a":1,"message":{"x":"}"},"toolUseResult":"y","payload":[1]}');
    const r = contentRegions(line)!;
    expect(r.length).toBe(6);
    expect(line.toString('utf8', r[0], r[1])).toBe('{"x":"}"}');
    expect(line.toString('utf8', r[2], r[3])).toBe('"y"');
    expect(line.toString('utf8', r[4], r[5])).toBe('[1]');
    expect(contentRegions(Buffer.from('[1,2]'))).toBeUndefined();
    expect(contentRegions(Buffer.from('{"message":{"a":'))).toBeUndefined();
  });

  it('refuses ids that do not fit the marks', () => {
    const { text, ids } = lift(Buffer.from(`{"uuid":"${randomUUID()}"}`));
    expect(() => back(text, ids.subarray(0, 8))).toThrow(/ended early/);
    expect(() => back(text, Buffer.concat([ids, ids]))).toThrow(/unused/);
  });
});
