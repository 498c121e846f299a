/**
 * A real corpus session trimmed by ctxvm into a given object store, with the page-in reference of
 * each of its stubs (found by findStubs) and, for each, the original line the payload was cut from — so a test can
 * check that paging in returns the original payload without knowing the storage layout.
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { trimSession } from '../../src/session/session.js';
import type { ObjectStore } from '../../src/store/object-store.js';
import { findStubs } from '../../src/session/trim/stub-scan.js';

/** A reference printed by a stub, and the original line (parsed) the stubbed line came from. */
export interface StubRef {
  ref: string;
  /** The `uuid` of the line holding the stub. */
  uuid: string;
  original: unknown;
  /** The trimmed file the stub is in (page-in by a call id looks there). */
  file: string;
}

function* values(value: unknown): Generator<unknown> {
  yield value;
  if (Array.isArray(value)) for (const v of value) yield* values(v);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) yield* values(v);
}

/** True when `payload` is `line` or any value nested inside it (deep equality). */
export function containsValue(line: unknown, payload: unknown): boolean {
  for (const v of values(line)) if (isDeepStrictEqual(v, payload)) return true;
  return false;
}

/** Every stub of a trimmed file with the reference it pages in by and the original line it was cut from. */
export async function stubRefsOf(input: string, output: string): Promise<StubRef[]> {
  const byUuid = new Map<string, unknown>();
  for (const line of (await readFile(input, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    const v = JSON.parse(line) as { uuid?: string };
    if (typeof v.uuid === 'string') byUuid.set(v.uuid, v);
  }
  const refs: StubRef[] = [];
  for (const line of (await readFile(output, 'utf8')).split('\n')) {
    if (!line.includes('[ctxvm paged out')) continue;
    const v = JSON.parse(line) as { uuid?: string };
    if (typeof v.uuid !== 'string' || !byUuid.has(v.uuid)) continue;
    for (const stub of findStubs(v)) refs.push({ ref: stub.ref, uuid: v.uuid, original: byUuid.get(v.uuid), file: output });
  }
  return refs;
}

/** Trims `input` into `output` (pages out to `store`) and collects the stub references. */
export async function trimWithRefs(input: string, output: string, store: ObjectStore): Promise<StubRef[]> {
  const report = await trimSession({ input, output, store, measure: false });
  if (!report.valid) throw new Error(`trim of ${input} is not valid`);
  return stubRefsOf(input, output);
}
