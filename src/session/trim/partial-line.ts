/**
 * A kept line the trimmer may change, read only as far as the transform needs it: its top-level
 * members located, `message` parsed (the transform rewrites its content), small members parsed,
 * and the `toolUseResult` side channel — never sent, only deleted or kept — reduced to the two
 * facts a stub reports (exit code, interrupted). Written back, each member keeps its bytes unless
 * the transform replaced it, so the text is JSON.stringify's for lines JSON.stringify wrote
 * (Claude Code's are), at a fraction of the cost on lines of megabytes. A line with a repeated
 * key is left to JSON.parse (the caller's fallback), whose result would differ.
 */
import { keyText, parseSlice, scanObject, type ScannedMember } from '../../core/json-scan.js';
import { createKeyTable } from '../../core/json-keys.js';
import { CLAUDE_KEYS } from '../claude/line-skim.js';
import type { ClaudeLine } from '../claude/types.js';
import { CONTENT_KEYS } from './lift.js';

const KNOWN_KEY = createKeyTable(CLAUDE_KEYS);

/** Members up to this many bytes are parsed; longer ones (but `message`) keep their bytes only. */
const PARSE_BYTES = 4096;

/** Stands in the value for a member that was not parsed: written back as its bytes. */
class UnparsedMember {
  constructor(readonly bytes: Buffer) {}
}

/** A partly read line: `value` for the transform, `json()` for its text once changed. */
export interface PartialLine {
  /** The line with `message` and small members parsed, `toolUseResult` as `{exitCode?, interrupted?}`. */
  value: ClaudeLine;
  /** Byte ranges of its content values, for lifting (lift.ts `contentRegions`). */
  regions: number[];
  /** JSON.stringify(value) for what `value` holds now, taken while the line's bytes are valid. */
  json(): string;
}

/** The facts a stub reads of a `toolUseResult` object (see claude-transform.ts `statusOf`). */
function toolUseFacts(b: Buffer, s: number, e: number): Record<string, unknown> | undefined {
  if (b[s] !== 0x7b) return undefined;
  const facts: Record<string, unknown> = {};
  const end = scanObject(b, s, e, (m) => {
    const key = keyText(b, m);
    if (key === 'exitCode' || key === 'interrupted') facts[key] = parseSlice(b, m.valueStart, m.valueEnd);
  });
  return end < 0 ? undefined : facts;
}

/**
 * Reads `bytes` (a JSON object line) partly, or undefined when it must be parsed whole: not an
 * object, a repeated key, or a `toolUseResult` that is not an object. Throws what JSON.parse
 * throws on a parsed member; members that are only carried are checked for structure.
 */
export function readPartialLine(bytes: Buffer): PartialLine | undefined {
  const members: { key: string; m: ScannedMember }[] = [];
  const seen = new Set<string>();
  const regions: number[] = [];
  let repeated = false;
  const end = scanObject(bytes, 0, bytes.length, (m) => {
    const key = KNOWN_KEY(bytes, m.keyStart, m.keyEnd) ?? keyText(bytes, m);
    if (seen.has(key)) repeated = true;
    seen.add(key);
    members.push({ key, m: { ...m } });
    if (CONTENT_KEYS.includes(key)) regions.push(m.valueStart, m.valueEnd);
  });
  if (end < 0 || repeated || end !== bytes.length) return undefined;
  const value: Record<string, unknown> = {};
  const original = new Map<string, unknown>();
  for (const { key, m } of members) {
    let v: unknown;
    if (key === 'toolUseResult') {
      v = toolUseFacts(bytes, m.valueStart, m.valueEnd);
      if (v === undefined) return undefined;
    } else if (key === 'message' || m.valueEnd - m.valueStart <= PARSE_BYTES) v = parseSlice(bytes, m.valueStart, m.valueEnd);
    else v = new UnparsedMember(bytes.subarray(m.valueStart, m.valueEnd));
    // as JSON.parse does: "__proto__" is an own property, never the prototype
    if (key === '__proto__') Object.defineProperty(value, key, { value: v, enumerable: true, writable: true, configurable: true });
    else value[key] = v;
    original.set(key, v);
  }
  const slices = new Map(members.map(({ key, m }) => [key, [m.valueStart, m.valueEnd] as const]));
  return {
    value: value as ClaudeLine,
    regions,
    json() {
      const parts: string[] = [];
      for (const key of Object.keys(value)) {
        const v = value[key];
        // JSON.stringify leaves out what has no JSON form
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        const at = slices.get(key);
        // the transform rewrites `message` in place, so it is always written anew
        const same = at !== undefined && key !== 'message' && original.get(key) === v;
        const text = v instanceof UnparsedMember ? v.bytes.toString('utf8') : same ? bytes.toString('utf8', at[0], at[1]) : JSON.stringify(v);
        parts.push(`${JSON.stringify(key)}:${text}`);
      }
      return `{${parts.join(',')}}`;
    },
  };
}
