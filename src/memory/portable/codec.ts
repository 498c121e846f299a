/**
 * Portable memory files as text: records → JSON lines, and JSON lines (from the one JSONL reader,
 * src/core/jsonl.ts) → a checked header and records that remember their line. Storage is
 * elsewhere (src/memory/store/portable-export.ts, portable-import.ts).
 */
import { ParseError } from '../../errors.js';
import type { JsonlRecord } from '../../core/jsonl.js';
import { canonicalRecord, parseHeader, parseRecord, PORTABLE_FORMAT, PORTABLE_VERSION, type PortableHeader, type PortableRecord } from './format.js';

/** A record with the line it came from (1-based) and that line's byte offset. */
export interface ReadRecord {
  record: PortableRecord;
  at: { file: string; line: number; byteOffset: number };
}

/** A parsed export. */
export interface PortableFile {
  header: PortableHeader;
  records: ReadRecord[];
}

/** The lines of an export of `user` (each without its newline): the header, then `records` in canonical form. */
export function* portableLines(user: string, records: Iterable<PortableRecord>, exportedAtMs: number): Generator<string> {
  const header: PortableHeader = { format: PORTABLE_FORMAT, version: PORTABLE_VERSION, user, exportedAt: new Date(exportedAtMs).toISOString() };
  yield JSON.stringify(header);
  for (const record of records) yield JSON.stringify(canonicalRecord(record));
}

/** Reads a whole export from parsed JSON lines named `name`; throws a ParseError naming the line of the first problem. */
export async function readPortable(lines: AsyncIterable<JsonlRecord>, name: string): Promise<PortableFile> {
  let header: PortableHeader | undefined;
  const records: ReadRecord[] = [];
  for await (const rec of lines) {
    const at = { file: name, line: rec.raw.line, byteOffset: rec.raw.byteOffset };
    if (rec.error) throw rec.error;
    if (header === undefined) header = parseHeader(rec.value, at);
    else records.push({ record: parseRecord(rec.value, at), at });
  }
  if (!header) throw new ParseError({ file: name, line: 1, byteOffset: 0 }, 'empty file: expected a ctxvm memory export header on line 1');
  return { header, records };
}
