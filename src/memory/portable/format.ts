/**
 * The portable memory format (`ctxvm memory export` / `import`): JSON lines, versioned. Line 1
 * is the header `{"format":"ctxvm-memory","version":1,"user":…,"exportedAt":…}`; every other
 * line is one record `{"type": "turn" | "project" | "task" | "decision" | "fact" | "history", …}`
 * holding the model's fields (model.ts) without `userId`; times are Unix ms. Records come in that
 * order of types, each type in creation order, history oldest first (its store-wide sequence
 * numbers are not exported: order is what they mean). Access statistics (retrieval weights) and
 * the cold archive's segmentation are not part of the format.
 *
 * A version-1 reader rejects other versions and unknown record types; it ignores fields it does
 * not know, so a later minor addition stays readable. Every error names the file and the line.
 */
import { ParseError } from '../../errors.js';
import type { Decision, Fact, HistoryEntry, Project, Task, Turn } from '../model.js';

/** Value of the header's `format`. */
export const PORTABLE_FORMAT = 'ctxvm-memory';
/** The version this build writes and reads. */
export const PORTABLE_VERSION = 1;

/** Line 1 of an export. */
export interface PortableHeader {
  format: typeof PORTABLE_FORMAT;
  version: typeof PORTABLE_VERSION;
  /** The user the memory belonged to. */
  user: string;
  /** When the export was made, ISO-8601. */
  exportedAt: string;
}

type Own<T> = Omit<T, 'userId'>;
/** One record line. */
export type PortableRecord =
  | ({ type: 'turn' } & Own<Turn>)
  | ({ type: 'project' } & Own<Project>)
  | ({ type: 'task' } & Own<Task>)
  | ({ type: 'decision' } & Own<Decision>)
  | ({ type: 'fact' } & Own<Fact>)
  | ({ type: 'history' } & Omit<HistoryEntry, 'userId' | 'seq'>);

/** Record types in the order an export writes them. */
export const RECORD_TYPES = ['turn', 'project', 'task', 'decision', 'fact', 'history'] as const;
export type PortableRecordType = (typeof RECORD_TYPES)[number];

/** Where a line came from, for errors. */
export interface LinePosition {
  file: string;
  line: number;
  byteOffset: number;
}

type Check = (v: unknown) => boolean;
const text: Check = (v) => typeof v === 'string';
const nonEmpty: Check = (v) => typeof v === 'string' && v !== '';
const optText: Check = (v) => v === null || typeof v === 'string';
const ms: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v);
const optMs: Check = (v) => v === null || ms(v);
const unit: Check = (v) => typeof v === 'number' && v >= 0 && v <= 1;
const ids: Check = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string');
const oneOf = (...values: string[]): Check => (v) => typeof v === 'string' && values.includes(v);

/** Fields of each record type and what each must hold (in the order an export writes them). */
const FIELDS: Record<PortableRecordType, Record<string, [Check, string]>> = {
  turn: {
    id: [nonEmpty, 'a non-empty string'],
    role: [oneOf('user', 'assistant', 'system'), '"user", "assistant" or "system"'],
    speaker: [optText, 'a string or null'],
    text: [text, 'a string'],
    atMs: [ms, 'Unix ms (an integer)'],
    sessionId: [optText, 'a string or null'],
  },
  project: {
    id: [nonEmpty, 'a non-empty string'],
    name: [nonEmpty, 'a non-empty string'],
    createdAtMs: [ms, 'Unix ms (an integer)'],
    updatedAtMs: [ms, 'Unix ms (an integer)'],
    sourceTurnIds: [ids, 'an array of strings'],
  },
  task: {
    id: [nonEmpty, 'a non-empty string'],
    title: [nonEmpty, 'a non-empty string'],
    status: [oneOf('todo', 'doing', 'done', 'cancelled'), '"todo", "doing", "done" or "cancelled"'],
    priority: [oneOf('low', 'normal', 'high', 'urgent'), '"low", "normal", "high" or "urgent"'],
    dueAtMs: [optMs, 'Unix ms or null'],
    duePhrase: [optText, 'a string or null'],
    projectId: [optText, 'a string or null'],
    createdAtMs: [ms, 'Unix ms (an integer)'],
    updatedAtMs: [ms, 'Unix ms (an integer)'],
    sourceTurnIds: [ids, 'an array of strings'],
    confidence: [unit, 'a number 0..1'],
  },
  decision: {
    id: [nonEmpty, 'a non-empty string'],
    text: [nonEmpty, 'a non-empty string'],
    rationale: [optText, 'a string or null'],
    taskId: [optText, 'a string or null'],
    projectId: [optText, 'a string or null'],
    createdAtMs: [ms, 'Unix ms (an integer)'],
    sourceTurnIds: [ids, 'an array of strings'],
  },
  fact: {
    id: [nonEmpty, 'a non-empty string'],
    kind: [oneOf('fact', 'preference'), '"fact" or "preference"'],
    key: [(v) => v === null || nonEmpty(v), 'a non-empty string or null'],
    text: [nonEmpty, 'a non-empty string'],
    createdAtMs: [ms, 'Unix ms (an integer)'],
    updatedAtMs: [ms, 'Unix ms (an integer)'],
    sourceTurnIds: [ids, 'an array of strings'],
    importance: [unit, 'a number 0..1'],
  },
  history: {
    kind: [oneOf('task', 'project', 'decision', 'fact'), '"task", "project", "decision" or "fact"'],
    recordId: [nonEmpty, 'a non-empty string'],
    field: [nonEmpty, 'a non-empty string'],
    oldValue: [optText, 'JSON text or null'],
    newValue: [optText, 'JSON text or null'],
    turnId: [optText, 'a string or null'],
    atMs: [ms, 'Unix ms (an integer)'],
  },
};

const HINT = `line 1 is {"format":"${PORTABLE_FORMAT}","version":${PORTABLE_VERSION},"user":…,"exportedAt":…}; then one record per line, as written by \`ctxvm memory export\``;

const fail = (at: LinePosition, detail: string) => new ParseError(at, detail, { hint: HINT });

/** The header of `value` (line 1), or a ParseError naming the file and line. */
export function parseHeader(value: unknown, at: LinePosition): PortableHeader {
  const v = value as Partial<PortableHeader> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v.format !== PORTABLE_FORMAT) {
    throw fail(at, `not a ctxvm memory export: expected a header with "format": "${PORTABLE_FORMAT}"`);
  }
  if (v.version !== PORTABLE_VERSION) {
    throw fail(at, `unsupported version ${JSON.stringify(v.version)}: this ctxvm reads version ${PORTABLE_VERSION}`);
  }
  if (typeof v.user !== 'string' || v.user === '') throw fail(at, 'header "user" must be a non-empty string');
  if (typeof v.exportedAt !== 'string' || !Number.isFinite(Date.parse(v.exportedAt))) throw fail(at, 'header "exportedAt" must be an ISO-8601 time');
  return { format: PORTABLE_FORMAT, version: PORTABLE_VERSION, user: v.user, exportedAt: v.exportedAt };
}

/** The record of `value` with exactly the known fields, or a ParseError naming file, line and field. */
export function parseRecord(value: unknown, at: LinePosition): PortableRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(at, 'expected a JSON object');
  const v = value as Record<string, unknown>;
  const type = v.type as PortableRecordType;
  const fields = typeof type === 'string' && Object.hasOwn(FIELDS, type) ? FIELDS[type] : undefined;
  if (!fields) throw fail(at, `unknown record type ${JSON.stringify(v.type)}; expected one of ${RECORD_TYPES.join(', ')}`);
  const out: Record<string, unknown> = { type };
  for (const [name, [check, expected]] of Object.entries(fields)) {
    if (!check(v[name])) throw fail(at, `${type} "${name}" must be ${expected}, got ${v[name] === undefined ? 'nothing' : JSON.stringify(v[name])}`);
    out[name] = v[name];
  }
  return out as PortableRecord;
}

/** `record` with the fields of its type only, in their canonical order (what an export writes). */
export function canonicalRecord(record: PortableRecord): PortableRecord {
  const out: Record<string, unknown> = { type: record.type };
  for (const name of Object.keys(FIELDS[record.type])) out[name] = (record as unknown as Record<string, unknown>)[name];
  return out as PortableRecord;
}
