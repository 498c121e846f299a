/**
 * Page-in: fetch one paged-out payload by the reference printed in its stub
 * (`ctxvm:<hash>#<json pointer>`), exactly as the tool returned it.
 */
import { CtxvmError, NotFoundError, UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { parsePayloadRef, resolvePointer } from './stub.js';

export interface PagedPayload {
  /** Full address of the object holding the original line. */
  hash: string;
  pointer: string;
  /** The payload: text as text, anything else (image blocks, arrays) as JSON. */
  kind: 'text' | 'json';
  content: unknown;
  /** The payload as a string ready to print. */
  text: string;
}

/** Finds the one object whose address starts with `prefix`. */
export async function resolveObjectPrefix(store: ObjectStore, prefix: string): Promise<string> {
  if (prefix.length === 64) return prefix;
  const matches = await store.findByPrefix(prefix);
  if (matches.length === 0) throw new NotFoundError(`no paged-out object starts with ${prefix}`, { hint: 'check CTXVM_HOME: page-in reads the object store the trim wrote to' });
  if (matches.length > 1) throw new UsageError(`reference ${prefix} is ambiguous (${matches.length} objects)`, { hint: 'use more hex digits of the hash' });
  return matches[0]!;
}

export async function pageIn(store: ObjectStore, ref: string): Promise<PagedPayload> {
  const parsed = parsePayloadRef(ref);
  if (!parsed) throw new UsageError(`not a ctxvm reference: ${JSON.stringify(ref)}`, { hint: 'copy the reference from a stub, e.g. ctxvm:3f2a9c0d1e2b4a5c#/message/content/0/content' });
  const hash = await resolveObjectPrefix(store, parsed.hashPrefix);
  const bytes = await store.get(hash);
  if (parsed.pointer === '') {
    const text = bytes.toString('utf8');
    return { hash, pointer: '', kind: 'text', content: text, text };
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new CtxvmError('E_INTEGRITY', `object ${hash} is not a JSON line, so ${parsed.pointer} cannot be resolved`, { cause });
  }
  const content = resolvePointer(value, parsed.pointer);
  if (content === undefined) throw new NotFoundError(`object ${hash} has nothing at ${parsed.pointer}`);
  if (typeof content === 'string') return { hash, pointer: parsed.pointer, kind: 'text', content, text: content };
  return { hash, pointer: parsed.pointer, kind: 'json', content, text: JSON.stringify(content, null, 2) };
}
