/**
 * Tokens an image costs the model, from its pixel size (read from the PNG/JPEG/GIF/WebP header in
 * the base64 data, without decoding the image). Anthropic scales images so the long edge is at
 * most 1568 px and charges ≈ width × height / 750 tokens; unknown formats count as the maximum.
 */

const MAX_EDGE = 1568;
const MAX_IMAGE_TOKENS = 1600;

function header(base64: string, bytes: number): Buffer {
  return Buffer.from(base64.slice(0, Math.ceil((bytes * 4) / 3) + 4), 'base64');
}

/** Width and height in pixels, or undefined when the format is not recognised. */
export function imageSize(base64: string): { width: number; height: number } | undefined {
  const b = header(base64, 64 * 1024);
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString('ascii', 0, 3) === 'GIF') return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WEBP') {
    const kind = b.toString('ascii', 12, 16);
    if (kind === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    if (kind === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    if (kind === 'VP8L') {
      const bits = b.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1]!;
      const len = b.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
      i += 2 + len;
    }
  }
  return undefined;
}

/** Tokens for one base64 image. */
export function imageTokens(base64: string): number {
  const size = imageSize(base64);
  if (!size || size.width <= 0 || size.height <= 0) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_EDGE / Math.max(size.width, size.height));
  const w = Math.round(size.width * scale);
  const h = Math.round(size.height * scale);
  return Math.min(MAX_IMAGE_TOKENS, Math.max(1, Math.ceil((w * h) / 750)));
}
