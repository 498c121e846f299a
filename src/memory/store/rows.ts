/**
 * Column readers shared by the memory store's files. Numbers go through `Number()` because
 * PostgreSQL returns BIGINT as text; JSON columns that fail to parse read as empty rather than
 * failing a whole listing.
 */
import type { SqlValue } from '../../store/warm/sql.js';

/** One result row. */
export type Row = Record<string, SqlValue>;

/** A number column (0 when null). */
export const num = (v: SqlValue | undefined): number => (v === null || v === undefined ? 0 : Number(v));
/** A nullable number column. */
export const optNum = (v: SqlValue | undefined): number | null => (v === null || v === undefined ? null : Number(v));
/** A text column ('' when null). */
export const str = (v: SqlValue | undefined): string => (v === null || v === undefined ? '' : String(v));
/** A nullable text column. */
export const optStr = (v: SqlValue | undefined): string | null => (v === null || v === undefined ? null : String(v));

/** A JSON array of strings stored in TEXT (source turn ids). */
export function idList(v: SqlValue | undefined): string[] {
  if (typeof v !== 'string' || v === '') return [];
  const simple = simpleIdList(v);
  if (simple) return simple;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * `JSON.parse` of the form `JSON.stringify` gives a list of plain ids (`[]`, `["a","b"]`: no
 * escapes, no control characters, no spaces between items), without the parser; undefined for
 * anything else. Every record read by a rebuild has such a list.
 */
function simpleIdList(v: string): string[] | undefined {
  if (v === '[]') return [];
  if (v.length < 4 || !v.startsWith('["') || !v.endsWith('"]')) return undefined;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x5c) return undefined; // a control character or a backslash
  }
  // Without backslashes every quote delimits a string, so the items are what lies between `","`.
  const ids = v.slice(2, -2).split('","');
  for (const id of ids) if (id.includes('"')) return undefined;
  return ids;
}

/** `ids` plus `extra` (when given and new), order kept. */
export function withSource(ids: readonly string[], extra: string | null | undefined): string[] {
  return extra && !ids.includes(extra) ? [...ids, extra] : [...ids];
}

/** Distinct non-empty strings of `ids`, order kept. */
export function distinctIds(ids: readonly string[] | undefined): string[] {
  return [...new Set((ids ?? []).filter((id) => typeof id === 'string' && id !== ''))];
}

/** Ids per `IN (…)` list, and rows per multi-row statement: well under either backend's parameter limit. */
export const ID_BATCH = 500;

const placeholderLists: string[] = [];

/** `n` comma-separated `?` placeholders. */
export const placeholders = (n: number): string => {
  // Remembered up to the usual batch sizes: id lists of hundreds are built on every rebuild.
  if (n <= 1000) return (placeholderLists[n] ??= Array.from({ length: n }, () => '?').join(', '));
  return Array.from({ length: n }, () => '?').join(', ');
};
