/**
 * Stubs: the small text that stands where a paged-out payload was. A stub costs tokens on every
 * later turn, so it is sized to what it replaces (see `StubBudget`): one bracketed header line
 * that says what the payload was (its tool, lines and size, exit status, why it went when not
 * for size) and ends with the reference that pages it back in, then — when the payload is large
 * enough to pay for it — an excerpt chosen for what a later turn would look for: the error line
 * of a failure, the tail of a command's output, the first matches of a search.
 */

/** Prefix of every stub's text; also how ctxvm recognises a stub it wrote (any version). */
export const STUB_PREFIX = '[ctxvm paged out';

/** Hex digits of a pack's address that a reference prints (more are accepted when reading). */
export const REF_HASH_DIGITS = 8;

/**
 * A reference to a paged-out payload: `ctxvm:<pack>#<offset><json-pointer>`, where `<pack>` is the
 * first hex digits of the pack's address, `<offset>` the byte offset of the original line in the
 * pack and the pointer says where in that line the payload is. `location` is `<pack>#<offset>`
 * (see TrimStreamWriter.nextLocation).
 */
export function payloadRef(location: string, pointer: string): string {
  return `ctxvm:${location}${pointer}`;
}

const REF_PACK_DIGITS = /ctxvm:[0-9a-f]{8,64}#/g;
/** What every reference's pack digits count as: a fixed 16-digit stand-in. */
const REF_COUNTING_STAND_IN = 'ctxvm:5a3c9e1f7b2d4086#';

/**
 * `text` with every reference's pack digits replaced by one fixed stand-in, for token counts that
 * decide whether a stub pays. While its pack is open a stub names it by a random placeholder
 * (the address is known only once the pack is sealed), and estimates of random hex vary, so a
 * decision on the stub as written would flip from run to run at the margin: the same input
 * would trim to different outputs.
 */
export function withStandInRefs(text: string): string {
  return text.includes('ctxvm:') ? text.replace(REF_PACK_DIGITS, REF_COUNTING_STAND_IN) : text;
}

/** Matches a reference inside a stub's text (group 1: the reference). */
export const STUB_REF = /(ctxvm:[0-9a-f]{8,64}#\d*\/[^\s\]"\\]*)/;

/** A parsed reference. */
export interface ParsedPayloadRef {
  /** At least 8 hex digits of the object's address. */
  hashPrefix: string;
  /** Offset of the line in a pack; absent for references into a one-line object (trims before packs). */
  offset?: number;
  /** JSON pointer into the line ('' for the whole line). */
  pointer: string;
}

/** Parses a reference printed in a stub (`ctxvm:<hex>#<offset>/…`, or the older `ctxvm:<hex>#/…`). */
export function parsePayloadRef(ref: string): ParsedPayloadRef | undefined {
  const m = /^(?:ctxvm:)?([0-9a-f]{8,64})(?:#(\d{1,15})?(\/.*)?)?$/.exec(ref.trim());
  if (!m) return undefined;
  return { hashPrefix: m[1]!, ...(m[2] !== undefined ? { offset: Number(m[2]) } : {}), pointer: m[3] ?? '' };
}

/** JSON pointer (RFC 6901) from path segments. */
export function jsonPointer(segments: (string | number)[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** Resolves a JSON pointer inside a parsed value; undefined when the path does not exist. */
export function resolvePointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let cur: unknown = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    // own properties only (`__proto__` or `constructor` must not reach Object.prototype), and of an array only its indexes
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    if (Array.isArray(cur) && !/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** How an excerpt is chosen from a payload. */
export type ExcerptShape = 'head' | 'tail' | 'head-tail';

/** What a stub says about its payload. */
export interface PayloadFacts {
  /** Kind of payload when it is not a tool result, e.g. "new_string input", "image/png image". */
  what?: string;
  /** "error", "exit 1", "interrupted"… (omitted when ok). */
  status?: string;
  lines?: number;
  bytes: number;
  /** Text to excerpt from (undefined for binary payloads). */
  text?: string;
  /** Which part of the text a later turn most likely needs (default head-tail). */
  shape?: ExcerptShape;
  /** Why it was paged out when not for size, e.g. "superseded by a newer read of this file". */
  reason?: string;
  /**
   * The reference to page it in by, printed in the stub. Omitted for payloads the agent's own
   * ids address (a tool result by its tool_use_id, an input by `<tool_use_id>/<field>`).
   */
  ref?: string;
  /** Add how to page in (the first stub of a trim says it once). */
  legend?: string;
}

/** How much a stub may say, in characters of excerpt (0: header only). */
export interface StubBudget {
  excerptChars: number;
}

/** 12345 → "12,345" (toLocaleString is slow on a hot path). */
export function formatInt(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// ANSI escape sequences (colours, cursor moves) carry no meaning for a model
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
/** Words that make a line of output look like an error. */
const ERROR_WORDS = 'error|errors|failed|failure|fatal|exception|traceback|panic|denied|not found|cannot|could not|undefined reference|segmentation fault';
const ERROR_LINE = new RegExp(`\\b(?:${ERROR_WORDS})\\b|^E\\s|✗|✘`, 'i');

/**
 * Where an error-looking line may be: every line ERROR_LINE matches holds a match of this (its
 * keywords without the closing boundary, which cutting a long line can add; its line start as a
 * line start of the text). Lines without one are never tested.
 */
const ERROR_CANDIDATE = new RegExp(`\\b(?:${ERROR_WORDS})|^E\\s|✗|✘`, 'gim');

/** Text without ANSI codes: every sequence starts with ESC, which most payloads have none of. */
function withoutAnsi(text: string): string {
  return text.includes('\u001b') ? text.replace(ANSI, '') : text;
}

/** A line of `clean[from, to)` as quoted: blanks at the end gone, a long indent squeezed, cut at `maxLine`; '' for a blank line. */
function quotable(clean: string, from: number, to: number, maxLine: number): string {
  // trimEnd/trimStart strip what \s matches (WhiteSpace and LineTerminator): the same lines as
  // the regexes /\s+$/ and /^\s+/, without their cost on long lines
  const line = clean.slice(from, to).trimEnd();
  if (line === '') return '';
  const body = line.trimStart();
  const squeezed = line.length - body.length > 8 ? `        ${body}` : line;
  return squeezed.length > maxLine ? `${squeezed.slice(0, maxLine)}…` : squeezed;
}

/** Lines of `text` worth quoting: ANSI codes gone, runs of blanks squeezed, long lines cut. */
function quotableLines(text: string, maxLine: number): string[] {
  const out: string[] = [];
  const clean = withoutAnsi(text);
  for (let from = 0; from <= clean.length; ) {
    let nl = clean.indexOf('\n', from);
    if (nl === -1) nl = clean.length;
    const line = quotable(clean, from, nl, maxLine);
    from = nl + 1;
    if (line !== '') out.push(line);
  }
  return out;
}

/**
 * The quotable lines of a long text (`quotableLines`), read from either end only as far as asked:
 * a stub quotes a few lines of outputs of megabytes. `skip`: the start of a line left out.
 */
class LinesFromEnds {
  /** Where the next line read from the front starts, and where the one read from the back ends. */
  front = 0;
  back: number;
  constructor(
    readonly clean: string,
    readonly maxLine: number,
    readonly skip = -1,
  ) {
    this.back = clean.length;
  }

  /** The next line from the front, undefined past the back. */
  fromFront(): string | undefined {
    while (this.front <= this.back && this.front <= this.clean.length) {
      const from = this.front;
      let nl = this.clean.indexOf('\n', from);
      if (nl === -1 || nl > this.back) nl = this.back;
      this.front = nl + 1;
      if (from === this.skip) continue;
      const line = quotable(this.clean, from, nl, this.maxLine);
      if (line !== '') return line;
    }
    return undefined;
  }

  /** The next line from the back, undefined past the front. */
  fromBack(): string | undefined {
    while (this.back >= this.front && this.back >= 0) {
      const to = this.back;
      const from = to > 0 ? this.clean.lastIndexOf('\n', to - 1) + 1 : 0;
      this.back = from - 1;
      if (from < this.front || from === this.skip) continue;
      const line = quotable(this.clean, from, to, this.maxLine);
      if (line !== '') return line;
    }
    return undefined;
  }
}

/** The first error-looking quotable line of `clean` and where it starts, or undefined. */
function firstErrorLine(clean: string, maxLine: number): { line: string; start: number } | undefined {
  const candidates = new RegExp(ERROR_CANDIDATE.source, ERROR_CANDIDATE.flags);
  for (let m = candidates.exec(clean); m !== null; m = candidates.exec(clean)) {
    const start = m.index > 0 ? clean.lastIndexOf('\n', m.index - 1) + 1 : 0;
    let end = clean.indexOf('\n', m.index);
    if (end === -1) end = clean.length;
    const line = quotable(clean, start, end, maxLine);
    if (line !== '' && ERROR_LINE.test(line)) return { line, start };
    candidates.lastIndex = end + 1;
  }
  return undefined;
}

/** Takes lines from `next` (in the order it gives them) until `budget` characters are spent. */
function takeFrom(next: () => string | undefined, budget: number): string[] {
  const out: string[] = [];
  let left = budget;
  for (let l = next(); l !== undefined; l = next()) {
    if (l.length + 1 > left) {
      if (out.length === 0 && left >= 24) out.push(`${l.slice(0, left - 1)}…`);
      break;
    }
    out.push(l);
    left -= l.length + 1;
  }
  return out;
}

/** Texts longer than this are excerpted from their ends (`LinesFromEnds`), characters. */
const LONG_TEXT = 16 * 1024;

/** `excerpt` of a long text, reading only the lines it quotes (and looking for an error line). */
function excerptOfLong(text: string, chars: number, shape: ExcerptShape): string {
  const maxLine = Math.max(24, Math.min(chars, 160));
  const clean = withoutAnsi(text);
  // all of it when it all fits (it rarely does: it is long)
  const all = new LinesFromEnds(clean, maxLine);
  const first: string[] = [];
  let length = -1;
  for (let l = all.fromFront(); l !== undefined && length <= chars; l = all.fromFront()) {
    first.push(l);
    length += l.length + 1;
  }
  if (first.length === 0) return '';
  if (length <= chars) return first.join('\n');
  const parts: string[] = [];
  let budget = chars;
  const err = firstErrorLine(clean, maxLine);
  if (err) {
    const e = take([err.line], Math.min(budget, 160));
    parts.push(...e);
    budget -= e.join('\n').length + 1;
  }
  const rest = new LinesFromEnds(clean, maxLine, err?.start ?? -1);
  if (shape === 'head') parts.push(...takeFrom(() => rest.fromFront(), budget - 2), '…');
  else if (shape === 'tail') parts.push('…', ...takeFrom(() => rest.fromBack(), budget - 2).reverse());
  else {
    // the tail starts after the lines the head took: a line the head looked at and left is the tail's
    const head: string[] = [];
    let left = Math.floor(budget / 2) - 2;
    for (let at = rest.front, l = rest.fromFront(); l !== undefined; at = rest.front, l = rest.fromFront()) {
      if (l.length + 1 > left) {
        if (head.length === 0 && left >= 24) head.push(`${l.slice(0, left - 1)}…`);
        else rest.front = at;
        break;
      }
      head.push(l);
      left -= l.length + 1;
    }
    const tail = takeFrom(() => rest.fromBack(), budget - head.join('\n').length - 3).reverse();
    parts.push(...head, '…', ...tail);
  }
  return parts.join('\n');
}

/** Takes lines from `lines` (in the given order) until `budget` characters are spent. */
function take(lines: readonly string[], budget: number): string[] {
  let i = 0;
  return takeFrom(() => lines[i++], budget);
}

/**
 * The excerpt of `text` within `chars` characters: the first error-looking line when there is
 * one, then the head, the tail or both, as `shape` says. Empty when nothing fits.
 */
export function excerpt(text: string, chars: number, shape: ExcerptShape = 'head-tail'): string {
  if (chars < 24 || !text) return '';
  if (text.length > LONG_TEXT) return excerptOfLong(text, chars, shape);
  return excerptQuotingEveryLine(text, chars, shape);
}

/**
 * `excerpt` the plain way, every line of `text` made quotable first: what it does for texts up to
 * `LONG_TEXT`, and the definition its reading of longer ones from the ends must match.
 */
export function excerptQuotingEveryLine(text: string, chars: number, shape: ExcerptShape): string {
  if (chars < 24 || !text) return '';
  const lines = quotableLines(text, Math.max(24, Math.min(chars, 160)));
  if (lines.length === 0) return '';
  const whole = lines.join('\n');
  if (whole.length <= chars) return whole;
  const parts: string[] = [];
  let budget = chars;
  const err = lines.findIndex((l) => ERROR_LINE.test(l));
  if (err !== -1) {
    const e = take([lines[err]!], Math.min(budget, 160));
    parts.push(...e);
    budget -= e.join('\n').length + 1;
  }
  const rest = err === -1 ? lines : lines.filter((_, i) => i !== err);
  if (shape === 'head') parts.push(...take(rest, budget - 2), '…');
  else if (shape === 'tail') parts.push('…', ...take([...rest].reverse(), budget - 2).reverse());
  else {
    const head = take(rest, Math.floor(budget / 2) - 2);
    const tail = take([...rest.slice(head.length)].reverse(), budget - head.join('\n').length - 3).reverse();
    parts.push(...head, '…', ...tail);
  }
  return parts.join('\n');
}

/** The size part of a stub: lines for multi-line text, bytes otherwise. */
function sizeOf(facts: PayloadFacts): string {
  return facts.lines !== undefined && facts.lines > 1 ? `${formatInt(facts.lines)} lines` : formatBytes(facts.bytes);
}

/** Builds the stub text for a paged-out payload (header, then an excerpt when the budget allows). */
export function renderStub(facts: PayloadFacts, budget: StubBudget): string {
  const head = [facts.what, sizeOf(facts)].filter(Boolean).join(', ');
  const notes = [facts.status, facts.reason, facts.ref, facts.legend].filter(Boolean);
  const header = `${STUB_PREFIX} ${head}${facts.status ? `, ${notes.shift()}` : ''}${notes.length ? ` · ${notes.join(' · ')}` : ''}]`;
  const quote = facts.text !== undefined && budget.excerptChars > 0 ? excerpt(facts.text, budget.excerptChars, facts.shape) : '';
  return quote ? `${header}\n${quote}` : header;
}

/** What the first stub of a trim adds, so the model and the person reading know how to page in. */
export const PAGE_IN_LEGEND = 'page in: ctxvm session page-in <tool_use_id>[/<input field>]';

/** True when `text` is a stub ctxvm wrote (this or an earlier version): a re-trim leaves it alone. */
export function isStub(text: unknown): boolean {
  return typeof text === 'string' && text.startsWith(STUB_PREFIX);
}

/** Rough token estimate for stubs (≈ 4 characters per token for Latin text, 1 per CJK character). */
export function estimateTokens(text: string): number {
  let cjk = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x2e80 && c <= 0x9fff) cjk++;
  }
  return Math.ceil((text.length - cjk) / 4) + cjk;
}

export function countLines(text: string): number {
  if (!text) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}
