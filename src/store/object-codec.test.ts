import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  codecFromId,
  codecId,
  compressBuffer,
  createCompressStream,
  createDecompressStream,
  decompressBuffer,
  resolveCodec,
} from './object-codec.js';
import type { ObjectCodecName } from './object-store.js';

const text = Buffer.from('{"type":"tool_result","content":"line of tool output"}\n'.repeat(2000));
const codecs: ObjectCodecName[] = ['none', 'gzip', 'brotli'];

describe('resolveCodec', () => {
  it('defaults to brotli quality 1 and each codec to its fast level', () => {
    expect(resolveCodec()).toEqual({ codec: 'brotli', level: 1 });
    expect(resolveCodec('gzip')).toEqual({ codec: 'gzip', level: 1 });
    expect(resolveCodec('none', 5)).toEqual({ codec: 'none', level: 0 });
    expect(resolveCodec('brotli', 11)).toEqual({ codec: 'brotli', level: 11 });
  });

  it('rejects unknown codecs and levels outside the codec range with E_USAGE', () => {
    for (const [codec, level] of [['zstd', 1], ['gzip', 0], ['gzip', 10], ['brotli', -1], ['brotli', 1.5]] as const) {
      expect(() => resolveCodec(codec as ObjectCodecName, level)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    }
  });
});

describe('codec ids', () => {
  it('keeps the header bytes stored files depend on', () => {
    expect(codecs.map(codecId)).toEqual([0, 1, 2]);
    expect([0, 1, 2].map(codecFromId)).toEqual(codecs);
    expect(codecFromId(3)).toBeUndefined();
  });
});

describe('compression', () => {
  for (const codec of codecs) {
    it(`round-trips ${codec} as a buffer and as a stream`, async () => {
      const settings = resolveCodec(codec);
      const packed = await compressBuffer(text, settings);
      if (codec !== 'none') expect(packed.length).toBeLessThan(text.length / 20);
      expect(Buffer.compare(await decompressBuffer(packed, codec), text)).toBe(0);

      let stream: Readable = Readable.from([text.subarray(0, 1000), text.subarray(1000)]);
      for (const stage of [createCompressStream(settings), createDecompressStream(codec)]) {
        if (stage) stream = stream.pipe(stage);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.compare(Buffer.concat(chunks), text)).toBe(0);
    });
  }

  it('refuses to decompress past the expected size', async () => {
    for (const codec of ['gzip', 'brotli'] as const) {
      const packed = await compressBuffer(text, resolveCodec(codec));
      await expect(decompressBuffer(packed, codec, 100)).rejects.toThrow(RangeError);
      expect((await decompressBuffer(packed, codec, text.length)).length).toBe(text.length);
    }
  });
});
