/**
 * Image token costs from the pixel size in the header (Anthropic: long edge scaled to at most
 * 1568 px, then ≈ width × height / 750 tokens), on hand-made headers of each format.
 */
import { describe, expect, it } from 'vitest';
import { imageSize, imageTokens } from './image-tokens.js';

function png(width: number, height: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'ascii');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b.toString('base64');
}
function gif(width: number, height: number): string {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'ascii');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b.toString('base64');
}
function jpeg(width: number, height: number): string {
  // SOI, an APP0 segment, then SOF0 with height and width
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]).toString('base64');
}
function webpVp8x(width: number, height: number): string {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'ascii');
  b.write('WEBPVP8X', 8, 'ascii');
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b.toString('base64');
}

describe('imageSize / imageTokens', () => {
  it.each([
    ['png', png],
    ['gif', gif],
    ['jpeg', jpeg],
    ['webp', webpVp8x],
  ])('%s: reads the pixel size from the header', (_name, make) => {
    expect(imageSize(make(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageTokens(make(640, 480))).toBe(Math.ceil((640 * 480) / 750));
  });

  it('scales the long edge down to 1568 px and caps the cost at 1600 tokens', () => {
    expect(imageTokens(png(3136, 100))).toBe(Math.ceil((1568 * 50) / 750));
    expect(imageTokens(png(4000, 3000))).toBe(1600);
  });

  it('an unknown format costs the maximum', () => {
    expect(imageSize(Buffer.from('not an image at all, really').toString('base64'))).toBeUndefined();
    expect(imageTokens('AAAA')).toBe(1600);
  });
});
