/**
 * Where folding can start, found before pass 1 by reading the end of the file backwards: the
 * second-to-last compaction boundary. Every line before it is before the last boundary, so the
 * trim removes it (unless it is a `summary` or preserved), and pass 1 can page it out as it reads
 * it — each of those bytes is then read once, not twice.
 *
 * `"compact_boundary"` with its quotes cannot occur inside a JSON string (the quotes would be
 * escaped), so each occurrence is a key or a value; its line is read and checked. A line that
 * cannot be checked (huge, unreadable) counts as no boundary: folding less is always safe.
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { skimClaudeLine } from '../claude/skim-line.js';
import { lineKind, type ClaudeLine } from '../claude/types.js';

const NEEDLE = Buffer.from('"compact_boundary"');
const BLOCK_BYTES = 1 << 20;
const STEP_BYTES = 64 * 1024;
/** Longer lines are not checked (a boundary line is a few hundred bytes), bytes. */
const MAX_LINE_BYTES = 1 << 20;

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

/** The line holding byte `pos`: its start and bytes (without terminator), or undefined when too long. */
async function lineAround(handle: FileHandle, size: number, pos: number): Promise<{ start: number; bytes: Buffer } | undefined> {
  let start = pos;
  while (start > 0) {
    const from = Math.max(0, start - STEP_BYTES);
    const nl = (await readAt(handle, from, start - from)).lastIndexOf(0x0a);
    if (nl !== -1) {
      start = from + nl + 1;
      break;
    }
    start = from;
    if (pos - start > MAX_LINE_BYTES) return undefined;
  }
  let end = pos;
  while (end < size) {
    const chunk = await readAt(handle, end, Math.min(STEP_BYTES, size - end));
    if (chunk.length === 0) break;
    const nl = chunk.indexOf(0x0a);
    if (nl !== -1) {
      end += nl;
      break;
    }
    end += chunk.length;
    if (end - start > MAX_LINE_BYTES) return undefined;
  }
  if (end - start > MAX_LINE_BYTES) return undefined;
  let bytes = await readAt(handle, start, end - start);
  if (bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
  return { start, bytes };
}

function isBoundaryLine(bytes: Buffer): boolean {
  let value: unknown;
  try {
    value = skimClaudeLine(bytes) ?? JSON.parse(bytes.toString('utf8'));
  } catch {
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return false;
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const line = value as ClaudeLine;
  return lineKind(line) === 'system' && line.subtype === 'compact_boundary';
}

/**
 * Byte offset where the second-to-last compact boundary line starts, looking at most
 * `maxScanBytes` back from the end (default 64 MiB); undefined when there is none within that,
 * or the file cannot be read (pass 1 then reports why).
 */
export async function findFoldPoint(file: string, maxScanBytes = 64 * 1024 * 1024): Promise<number | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = (await handle.stat()).size;
    let end = size;
    let found = 0;
    let lastLine = -1;
    while (end > 0 && size - end < maxScanBytes) {
      const start = Math.max(0, end - BLOCK_BYTES);
      // overlap the next block by the needle's length, so a match across the seam is seen once
      const block = await readAt(handle, start, Math.min(size, end + NEEDLE.length - 1) - start);
      for (let i = block.lastIndexOf(NEEDLE); i !== -1; i = i > 0 ? block.lastIndexOf(NEEDLE, i - 1) : -1) {
        if (start + i >= end) continue; // seen with the block after this one
        const line = await lineAround(handle, size, start + i);
        if (!line || line.start === lastLine) continue;
        lastLine = line.start;
        if (isBoundaryLine(line.bytes) && ++found === 2) return line.start;
      }
      end = start;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
