/**
 * Translates the warm store's portable `?` placeholders into PostgreSQL's `$1 … $n`. A small
 * tokenizer skips everything where a `?` is not a placeholder: string literals ('…' with ''
 * escapes, E'…' with backslash escapes), quoted identifiers ("…"), dollar-quoted bodies
 * ($$…$$, $tag$…$tag$), line comments (-- …) and block comments (nested, as PostgreSQL nests
 * them). PostgreSQL's jsonb operators `?`, `?|`, `?&` therefore cannot be written through the
 * seam; use `jsonb_exists()` / `jsonb_exists_any()` / `jsonb_exists_all()` instead.
 * Unterminated literals and comments are left as they are: the server reports the syntax error.
 */

/** A statement with `$n` placeholders and how many it has. */
export interface TranslatedSql {
  /** The statement as PostgreSQL expects it. */
  text: string;
  /** Number of placeholders (`$1 … $count`), i.e. parameters the statement needs. */
  count: number;
}

const IDENT_START = /[A-Za-z_\u0080-\uffff]/;
const IDENT_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

/** End (exclusive) of a '…' literal starting at `start`; `backslash` for E'…' escapes. */
function endOfQuoted(sql: string, start: number, quote: string, backslash: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (backslash && ch === '\\') {
      i += 2;
      continue;
    }
    if (ch === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

/** End (exclusive) of a block comment starting at `start` (`/*`), honouring nesting. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

/** The opening tag (`$$` or `$tag$`) of a dollar-quoted string at `start`, or undefined. */
function dollarTag(sql: string, start: number): string | undefined {
  let i = start + 1;
  if (sql[i] === '$') return '$$';
  if (!IDENT_START.test(sql[i] ?? '')) return undefined; // `$1` is a parameter, not a quote
  while (i < sql.length && sql[i] !== '$') {
    if (!/[A-Za-z0-9_\u0080-\uffff]/.test(sql[i]!)) return undefined;
    i++;
  }
  return i < sql.length ? sql.slice(start, i + 1) : undefined;
}

/** Rewrites each placeholder `?` to `$1`, `$2`, … in order; everything else is copied as is. */
export function translatePlaceholders(sql: string): TranslatedSql {
  let out = '';
  let count = 0;
  let copiedTo = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    const prev = i > 0 ? sql[i - 1]! : '';
    if (ch === '?') {
      out += `${sql.slice(copiedTo, i)}$${++count}`;
      copiedTo = ++i;
    } else if (ch === "'") {
      // E'…' (or e'…') takes backslash escapes, unless the E ends a longer identifier.
      const escaped = (prev === 'E' || prev === 'e') && !IDENT_PART.test(i > 1 ? sql[i - 2]! : '');
      i = endOfQuoted(sql, i, "'", escaped);
    } else if (ch === '"') {
      i = endOfQuoted(sql, i, '"', false);
    } else if (ch === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      i = endOfBlockComment(sql, i);
    } else if (ch === '$' && !IDENT_PART.test(prev)) {
      const tag = dollarTag(sql, i);
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length);
        i = close === -1 ? sql.length : close + tag.length;
      } else i++;
    } else if (IDENT_PART.test(ch)) {
      // Skip a whole word, so a `$` inside an identifier (a$b) is never read as a quote.
      while (i < sql.length && IDENT_PART.test(sql[i]!)) i++;
    } else i++;
  }
  return { text: out + sql.slice(copiedTo), count };
}
