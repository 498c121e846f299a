import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, rm, writeFile, readFile, readdir, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readLines, readJsonl, linesFromChunks, parseJsonlText, JsonlWriter, type RawLine, type JsonlRecord } from './jsonl.js';
import { ParseError, CtxvmError } from '../errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-jsonl-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Re-assembles the exact bytes from lines, the way a passthrough writer does. */
function reassemble(lines: RawLine[]): Buffer {
  const parts: Buffer[] = [];
  for (const l of lines) {
    if (l.bom) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
    parts.push(Buffer.from(l.bytes), Buffer.from(l.eol));
  }
  return Buffer.concat(parts);
}

describe('linesFromChunks', () => {
  it('reports line numbers, byte offsets and terminators for LF, CRLF and a missing final newline', async () => {
    const text = 'a\r\nbb\n\nccc';
    const lines = await collect(linesFromChunks([Buffer.from(text)]));
    expect(lines.map((l) => [l.line, l.byteOffset, l.text, l.eol])).toEqual([
      [1, 0, 'a', '\r\n'],
      [2, 3, 'bb', '\n'],
      [3, 6, '', '\n'],
      [4, 7, 'ccc', ''],
    ]);
  });

  it('strips a UTF-8 BOM from line 1 and remembers it', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n{"b":2}\n')]);
    const lines = await collect(linesFromChunks([bytes]));
    expect(lines[0]!.bom).toBe(true);
    expect(lines[0]!.text).toBe('{"a":1}');
    expect(lines[0]!.byteOffset).toBe(3);
    expect(lines[1]!.bom).toBe(false);
    expect(lines[1]!.byteOffset).toBe(11);
    expect(reassemble(lines).equals(bytes)).toBe(true);
  });

  it('handles a BOM split across tiny chunks and multi-byte characters split across chunks', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"t":"周报✓"}\n{"t":"é"}')]);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i++) chunks.push(bytes.subarray(i, i + 1));
    const lines = await collect(linesFromChunks(chunks));
    expect(lines.map((l) => l.text)).toEqual(['{"t":"周报✓"}', '{"t":"é"}']);
    expect(lines[0]!.bom).toBe(true);
    expect(reassemble(lines).equals(bytes)).toBe(true);
  });

  it('never loses bytes: reassembling lines gives the input back (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 40 }), async (arr, chunkSize) => {
        const bytes = Buffer.from(arr);
        const chunks: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
        const lines = await collect(linesFromChunks(chunks));
        expect(reassemble(lines).equals(bytes)).toBe(true);
        for (const l of lines) expect(bytes.subarray(l.byteOffset, l.byteOffset + l.bytes.length).equals(l.bytes)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('readJsonl', () => {
  it('parses records and skips blank lines', async () => {
    const p = join(dir, 'a.jsonl');
    await writeFile(p, '{"n":1}\r\n\n   \n{"n":2}\n');
    const recs = await collect(readJsonl<{ n: number }>(p));
    expect(recs.map((r) => [r.raw.line, r.value?.n])).toEqual([
      [1, 1],
      [4, 2],
    ]);
  });

  it('throws a ParseError naming file, line and byte offset for a bad line', async () => {
    const p = join(dir, 'bad.jsonl');
    await writeFile(p, '{"ok":1}\n{"broken": \n{"ok":2}\n');
    let caught: unknown;
    try {
      await collect(readJsonl(p));
    } catch (e) {
      caught = e;
    }
    expect(ParseError.is(caught)).toBe(true);
    const err = caught as ParseError;
    expect(err.file).toBe(p);
    expect(err.line).toBe(2);
    expect(err.byteOffset).toBe(9);
    expect(err.message).toContain(`${p}:2:`);
  });

  it('yields every bad line with its number when asked, never dropping one', async () => {
    const p = join(dir, 'many.jsonl');
    await writeFile(p, 'nope\n{"a":1}\n[1,\n{"b":2}\n{"trunc');
    const recs: JsonlRecord[] = await collect(readJsonl(p, { onBadLine: 'yield' }));
    expect(recs.map((r) => [r.raw.line, r.error ? 'bad' : 'ok'])).toEqual([
      [1, 'bad'],
      [2, 'ok'],
      [3, 'bad'],
      [4, 'ok'],
      [5, 'bad'],
    ]);
    expect(recs[4]!.error!.message).toMatch(/truncated last line/);
    expect(recs[0]!.error!.message).not.toMatch(/truncated/);
  });

  it('accepts a valid last line without a newline', async () => {
    const p = join(dir, 'nonl.jsonl');
    await writeFile(p, '{"a":1}\n{"a":2}');
    const recs = await collect(readJsonl<{ a: number }>(p));
    expect(recs.map((r) => r.value!.a)).toEqual([1, 2]);
    expect(recs[1]!.raw.eol).toBe('');
  });

  it('calls a binary file a binary file', async () => {
    const p = join(dir, 'bin.jsonl');
    await writeFile(p, Buffer.from([0x00, 0x01, 0x02, 0x0a, 0xff, 0x00]));
    await expect(collect(readJsonl(p))).rejects.toThrow(/NUL bytes/);
  });

  it('reads a line of tens of megabytes across many read blocks', async () => {
    const p = join(dir, 'huge.jsonl');
    const big = 'x'.repeat(24 * 1024 * 1024);
    await writeFile(p, `{"small":true}\n${JSON.stringify({ big })}\n{"after":1}\n`);
    const lines: Array<[number, number]> = [];
    for await (const r of readJsonl<Record<string, unknown>>(p)) lines.push([r.raw.line, r.raw.bytes.length]);
    expect(lines).toEqual([
      [1, 14],
      [2, big.length + 10],
      [3, 11],
    ]);
  });

  it('names the path for a missing file and for a directory', async () => {
    await expect(collect(readJsonl(join(dir, 'missing.jsonl')))).rejects.toSatisfy(
      (e: unknown) => CtxvmError.is(e) && e.code === 'E_NOT_FOUND' && e.message.includes('missing.jsonl'),
    );
    await mkdir(join(dir, 'sub'));
    await expect(collect(readLines(join(dir, 'sub')))).rejects.toThrow(/is a directory/);
  });

  it('parses in-memory text the same way', async () => {
    const recs = await collect(parseJsonlText('{"a":1}\n\n{"b":[2]}'));
    expect(recs.map((r) => r.value)).toEqual([{ a: 1 }, { b: [2] }]);
  });
});

describe('JsonlWriter', () => {
  it('writes atomically: nothing is visible before close, everything after', async () => {
    const p = join(dir, 'out.jsonl');
    const w = await JsonlWriter.open(p);
    await w.writeValue({ a: 1 });
    await w.writeValue({ b: '周报' }, '\r\n');
    expect(await readdir(dir)).not.toContain('out.jsonl');
    await w.close();
    expect(await readFile(p, 'utf8')).toBe('{"a":1}\n{"b":"周报"}\r\n');
    expect(w.lines).toBe(2);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('abort leaves an existing target untouched and removes the temp file', async () => {
    const p = join(dir, 'keep.jsonl');
    await writeFile(p, 'original\n');
    const w = await JsonlWriter.open(p);
    await w.writeValue({ replaced: true });
    await w.abort();
    expect(await readFile(p, 'utf8')).toBe('original\n');
    expect(await readdir(dir)).toEqual(['keep.jsonl']);
  });

  it('round-trips a file byte for byte with writeLine', async () => {
    const src = join(dir, 'src.jsonl');
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\r\n\n{"b":2}\n{"c":3}')]);
    await writeFile(src, bytes);
    const dst = join(dir, 'dst.jsonl');
    const w = await JsonlWriter.open(dst);
    for await (const line of readLines(src)) await w.writeLine(line);
    await w.close();
    expect((await readFile(dst)).equals(bytes)).toBe(true);
  });
});

describe('readLineBatches', () => {
  it('reads the same lines in batches, from the start or from a line, reusing its buffers or not', async () => {
    const { readLineBatches } = await import('./jsonl.js');
    const dir = await mkdtemp(join(tmpdir(), 'ctxvm-batches-'));
    try {
      const path = join(dir, 'f.jsonl');
      // lines of every size, some longer than a read block
      const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat((i * 7919) % 5000 + (i % 97 === 0 ? 3_000_000 : 0)) }));
      await writeFile(path, '\ufeff' + lines.join('\r\n') + '\n' + lines[0]);
      const expected: { line: number; byteOffset: number; text: string; eol: string; bom: boolean }[] = [];
      for await (const l of readLines(path)) expected.push({ line: l.line, byteOffset: l.byteOffset, text: l.text, eol: l.eol, bom: l.bom });
      for (const reuseBuffers of [false, true]) {
        const got: typeof expected = [];
        for await (const batch of readLineBatches(path, { reuseBuffers })) for (const l of batch) got.push({ line: l.line, byteOffset: l.byteOffset, text: l.text, eol: l.eol, bom: l.bom });
        expect(got).toEqual(expected);
        const from = expected[150]!;
        const rest: typeof expected = [];
        for await (const batch of readLineBatches(path, { reuseBuffers, from: { byteOffset: from.byteOffset, line: from.line } }))
          for (const l of batch) rest.push({ line: l.line, byteOffset: l.byteOffset, text: l.text, eol: l.eol, bom: l.bom });
        expect(rest).toEqual(expected.slice(150));
      }
      // a detached line outlives the buffers being reused
      const kept: { copy: RawLine; text: string }[] = [];
      for await (const batch of readLineBatches(path, { reuseBuffers: true })) kept.push({ copy: batch[0]!.detach(), text: batch[0]!.bytes.toString('latin1') });
      for (const k of kept) expect(k.copy.bytes.toString('latin1')).toBe(k.text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
