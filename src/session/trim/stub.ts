/**
 * Stubs: the small, informative text that stands where a paged-out payload was. A stub says what
 * the payload was (tool, path or command, status, size) and quotes its head and tail, and ends
 * with the reference that pages it back in (`ctxvm session page-in <ref>`, or the MCP tool).
 */

/** Prefix of every stub's text; also how ctxvm recognises a stub it wrote. */
export const STUB_PREFIX = '[ctxvm paged out';

/**
 * A reference to a paged-out payload: `ctxvm:<pack>#<offset><json-pointer>`, where `<pack>` is the
 * first 16 hex digits of the pack's address, `<offset>` the byte offset of the original line in
 * the pack and the pointer says where in that line the payload is. `location` is
 * `<pack>#<offset>` (see TrimStreamWriter.nextLocation).
 */
export function payloadRef(location: string, pointer: string): string {
  return `ctxvm:${location}${pointer}`;
}

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
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

export interface PayloadFacts {
  /** What was paged out, e.g. "tool result", "tool input content", "image", "thinking". */
  what: string;
  tool?: string;
  /** Path, command or pattern that identifies the call. */
  target?: string;
  /** "error", "ok", "exit 1", "interrupted"... */
  status?: string;
  /** Estimated tokens of the payload. */
  tokens: number;
  lines?: number;
  bytes: number;
  /** Text to quote head and tail from (undefined for binary payloads). */
  text?: string;
  /** Why it was paged out when not for size, e.g. "superseded by a newer read of this file". */
  reason?: string;
  ref: string;
}

/** 12345 → "12,345" (toLocaleString is slow on a hot path). */
export function formatInt(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Cuts `text` to at most `chars` characters at a line break when one is near. */
function head(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.lastIndexOf('\n', chars);
  return text.slice(0, cut > chars / 2 ? cut : chars);
}

function tail(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const start = text.length - chars;
  const cut = text.indexOf('\n', start);
  return text.slice(cut !== -1 && cut < start + chars / 2 ? cut + 1 : start);
}

/** Builds the stub text for a paged-out payload. */
export function renderStub(facts: PayloadFacts, excerptChars: number): string {
  const title = [facts.what, facts.tool, facts.target ? `\`${facts.target.length > 200 ? facts.target.slice(0, 200) + '…' : facts.target}\`` : undefined]
    .filter(Boolean)
    .join(' · ');
  const size = [`≈${formatInt(facts.tokens)} tokens`, facts.lines !== undefined ? `${formatInt(facts.lines)} lines` : undefined, formatBytes(facts.bytes)]
    .filter(Boolean)
    .join(', ');
  const parts = [`${STUB_PREFIX}: ${title}]`, [facts.status, size, facts.reason].filter(Boolean).join(' · ')];
  const text = facts.text?.trim();
  if (text && excerptChars > 0) {
    if (text.length <= excerptChars * 2 + 40) {
      parts.push(text);
    } else {
      parts.push(`head: ${head(text, excerptChars)}`, '…', `tail: ${tail(text, excerptChars)}`);
    }
  }
  parts.push(`page in: ctxvm session page-in ${facts.ref}`);
  return parts.join('\n');
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
