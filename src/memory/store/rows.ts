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
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** `ids` plus `extra` (when given and new), order kept. */
export function withSource(ids: readonly string[], extra: string | null | undefined): string[] {
  return extra && !ids.includes(extra) ? [...ids, extra] : [...ids];
}

/** Distinct non-empty strings of `ids`, order kept. */
export function distinctIds(ids: readonly string[] | undefined): string[] {
  return [...new Set((ids ?? []).filter((id) => typeof id === 'string' && id !== ''))];
}

/** `n` comma-separated `?` placeholders. */
export const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
