/**
 * Lean lines: what validation reads of a transcript line, without its bulk. Validating a session
 * (validate.ts) walks the reconstructed context, which holds every line of the resumed chain; on
 * a long live tail that is most of the file, hundreds of MB of tool output and images. The
 * findings depend on no payload beyond whether a string is empty, blank, or how it starts (tags,
 * a leading "/"), so a lean line keeps every field but shortens long strings to a stand-in that
 * answers those questions the same way, and drops what nothing in validation reads (tool inputs,
 * the `toolUseResult` side channel, usage). `lean-line.test.ts` compares findings of both loads
 * over the corpus.
 */

/** Strings up to this many characters are kept as they are. */
const KEEP_CHARS = 256;
/** Characters of the trimmed start kept when the first KEEP_CHARS are blank. */
const TRIMMED_HEAD_CHARS = 64;
const NOT_BLANK = /\S/;

/**
 * A short string that is empty, blank (trims to ''), starts and trims-starts the way `s` does:
 * the questions context.ts, api-messages.ts and local-command.ts ask of a text.
 */
export function standIn(s: string): string {
  if (s.length <= KEEP_CHARS) return s;
  const head = s.slice(0, KEEP_CHARS);
  if (NOT_BLANK.test(head)) return detached(`${head}…`);
  if (!NOT_BLANK.test(s)) return ' ';
  return detached(`${head}${s.trimStart().slice(0, TRIMMED_HEAD_CHARS)}…`);
}

/** A copy that does not keep `s`'s parent alive (a slice of a string points into it). */
function detached(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

function leanValue(v: unknown): unknown {
  if (typeof v === 'string') return standIn(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(leanValue);
  const out: Record<string, unknown> = {};
  const block = v as Record<string, unknown>;
  for (const key of Object.keys(block)) {
    // a tool call's input is only counted (tokens), never judged
    if (key === 'input' && block.type === 'tool_use') out[key] = {};
    else out[key] = leanValue(block[key]);
  }
  return out;
}

/** Top-level fields validation never reads (and that can be large). */
const DROPPED = new Set(['toolUseResult', 'snapshot', 'data', 'normalizedMessages']);

/** The lean form of a parsed transcript line (a new object; `line` is left alone). */
export function leanClaudeLine<T extends Record<string, unknown>>(line: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(line)) {
    if (DROPPED.has(key)) continue;
    const value = line[key];
    if (key === 'message' && value && typeof value === 'object' && !Array.isArray(value)) {
      const { usage: _usage, ...rest } = value as Record<string, unknown>;
      out[key] = leanValue(rest);
    } else out[key] = leanValue(value);
  }
  return out as T;
}
