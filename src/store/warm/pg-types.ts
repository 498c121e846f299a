/**
 * How PostgreSQL column values become `SqlValue`s. node-postgres returns BIGINT (int8) and
 * NUMERIC as strings, because a JS number cannot hold every int8; the warm store keeps sizes
 * and Unix-ms times in BIGINT and SQLite returns them as numbers, so this driver parses them:
 * a number when it is a safe integer, a `bigint` beyond ±2^53. NUMERIC only comes out of
 * aggregates here (SUM of a BIGINT column): integers follow the int8 rule, fractions become a
 * float as SQLite's REAL would. The parsers are installed on the driver's own pool (its `types`
 * option), never on pg's global table, so other users of `pg` in the process are unaffected.
 */

/** Type OIDs from pg_type. */
export const PG_OID = { int8: 20, numeric: 1700 } as const;

/** Parses an int8 in text form: a number when safe, otherwise a bigint (exact). */
export function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/** Parses a NUMERIC in text form: integers as `parseInt8`, anything else (fractions, NaN) as a float. */
export function parseNumeric(text: string): number | bigint {
  return /^-?\d+$/.test(text) ? parseInt8(text) : Number(text);
}

/** A text-format parser, by OID. */
export type TextParser = (text: string) => unknown;

/** The driver's own text parsers; every other type uses pg's defaults. */
export const WARM_TEXT_PARSERS: Readonly<Record<number, TextParser>> = {
  [PG_OID.int8]: parseInt8,
  [PG_OID.numeric]: parseNumeric,
};

/** pg's `types` option: our parsers first, then `fallback` (pg's own `types.getTypeParser`). */
export function warmTypes(fallback: (oid: number, format?: string) => unknown): { getTypeParser: (oid: number, format?: string) => unknown } {
  return {
    getTypeParser: (oid: number, format?: string) => ((format ?? 'text') === 'text' ? WARM_TEXT_PARSERS[oid] : undefined) ?? fallback(oid, format),
  };
}
