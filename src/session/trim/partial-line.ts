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
import { CtxvmError } from '../../errors.js';
import { CLAUDE_KEYS, EditFact, EditSlot } from '../claude/line-skim.js';
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

/**
 * The content regions of a line (lift.ts `contentRegions`) from pass 1's notes on it, or
 * undefined when the notes cannot say (a `payload` member, a repeated one).
 */
export function regionsFromEdits(edits: Int32Array, at: number): number[] | undefined {
  if (edits[at + EditSlot.Facts]! & EditFact.Whole) return undefined;
  const message = edits[at + EditSlot.MessageStart]!;
  const result = edits[at + EditSlot.ResultStart]!;
  const regions: number[] = [];
  const addMessage = () => regions.push(message, edits[at + EditSlot.MessageEnd]!);
  const addResult = () => regions.push(result, edits[at + EditSlot.ResultEnd]!);
  if (message >= 0 && (result < 0 || message < result)) {
    addMessage();
    if (result >= 0) addResult();
  } else if (result >= 0) {
    addResult();
    if (message >= 0) addMessage();
  }
  return regions;
}

/**
 * A line read partly where pass 1 noted its members (`ClaudeIndex.edits`, from `at`): nothing is
 * scanned again. `type` is the line's type (from its record). Undefined when the notes say the
 * line must be parsed whole. Written back, `message` and `parentUuid` are written anew in place
 * and a deleted `toolUseResult` is cut out; the rest keeps its bytes.
 */
export function partialFromEdits(bytes: Buffer, edits: Int32Array, at: number, type: string): PartialLine | undefined {
  const facts = edits[at + EditSlot.Facts]!;
  if (facts & (EditFact.Whole | EditFact.ResultUnread)) return undefined;
  const slot = (s: number) => edits[at + s]!;
  const value: Record<string, unknown> = { type };
  const regions: number[] = [];
  const messageStart = slot(EditSlot.MessageStart);
  const resultKey = slot(EditSlot.ResultKey);
  const parentStart = slot(EditSlot.ParentStart);
  if (parentStart >= 0) value.parentUuid = parseSlice(bytes, parentStart, slot(EditSlot.ParentEnd));
  if (messageStart >= 0) value.message = parseSlice(bytes, messageStart, slot(EditSlot.MessageEnd));
  if (resultKey >= 0) {
    // what a stub reads of it (claude-transform.ts `statusOf`); a string or a list has neither
    const known: Record<string, unknown> = {};
    if (facts & EditFact.ExitCode) known.exitCode = slot(EditSlot.ExitCode);
    if (facts & EditFact.HasInterrupted) known.interrupted = (facts & EditFact.Interrupted) !== 0;
    value.toolUseResult = known;
  }
  regions.push(...regionsFromEdits(edits, at)!);
  const result = value.toolUseResult;
  return {
    value: value as ClaudeLine,
    regions,
    json() {
      for (const key of Object.keys(value)) {
        const had = key === 'type' || (key === 'parentUuid' && parentStart >= 0) || (key === 'message' && messageStart >= 0) || (key === 'toolUseResult' && resultKey >= 0);
        if (!had) throw new CtxvmError('E_INTERNAL', `the transform set "${key}", which the line did not have: a partly read line cannot write it back`);
      }
      const cuts: [number, number, string][] = [];
      if (messageStart >= 0) cuts.push([messageStart, slot(EditSlot.MessageEnd), JSON.stringify(value.message)]);
      if (parentStart >= 0) cuts.push([parentStart, slot(EditSlot.ParentEnd), JSON.stringify(value.parentUuid)]);
      if (resultKey >= 0 && value.toolUseResult !== result) {
        if (value.toolUseResult !== undefined) throw new CtxvmError('E_INTERNAL', 'the transform replaced toolUseResult, which a partly read line cannot write back');
        cuts.push(memberCut(bytes, resultKey, slot(EditSlot.ResultEnd), slot(EditSlot.ResultAfter)));
      }
      cuts.sort((a, b) => a[0] - b[0]);
      let text = '';
      let pos = 0;
      for (const [s, e, replacement] of cuts) {
        text += bytes.toString('utf8', pos, s) + replacement;
        pos = e;
      }
      return text + bytes.toString('utf8', pos, bytes.length);
    },
  };
}

/** The bytes to cut to remove the member from `keyStart` to `valueEnd` (with the comma before it, or else after it). */
function memberCut(bytes: Buffer, keyStart: number, valueEnd: number, previousEnd: number): [number, number, string] {
  if (previousEnd >= 0) return [previousEnd, valueEnd, ''];
  // the first member: its comma and the space after it go with it
  let end = valueEnd;
  while (end < bytes.length && (bytes[end] === 0x20 || bytes[end] === 0x09)) end++;
  if (bytes[end] === 0x2c) {
    end++;
    while (end < bytes.length && (bytes[end] === 0x20 || bytes[end] === 0x09)) end++;
  }
  return [keyStart, end, ''];
}
