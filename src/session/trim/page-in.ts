/**
 * Page-in: fetch one paged-out payload by the reference printed in its stub
 * (`ctxvm:<pack>#<offset><json pointer>`, or `ctxvm:<hash>#<json pointer>` from trims made before
 * packs), exactly as the tool returned it.
 */
import { ByteBuffer } from '../../core/byte-buffer.js';
import { CtxvmError, NotFoundError, UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { unlift } from './lift.js';
import { parsePayloadRef, resolvePointer } from './stub.js';

export interface PagedPayload {
  /** Full address of the object holding the original line (a pack, or a one-line object). */
  hash: string;
  /** Offset of the line in the pack, when the reference names one. */
  offset?: number;
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

/**
 * The original line at `offset` in a pack, decoded. Its UUIDs outside the content were lifted
 * out (they are kept with the trimmed file) and read as the nil UUID; content is exact.
 */
function lineInPack(pack: Buffer, hash: string, offset: number): string {
  if (offset >= pack.length) throw new NotFoundError(`pack ${hash} has ${pack.length} bytes; nothing starts at ${offset}`);
  const nl = pack.indexOf(0x0a, offset);
  const out = new ByteBuffer(Math.max(64, (nl === -1 ? pack.length : nl) - offset + 1024));
  unlift(pack.subarray(offset, nl === -1 ? pack.length : nl + 1), undefined, out);
  const text = out.view().toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export async function pageIn(store: ObjectStore, ref: string): Promise<PagedPayload> {
  const parsed = parsePayloadRef(ref);
  if (!parsed) throw new UsageError(`not a ctxvm reference: ${JSON.stringify(ref)}`, { hint: 'copy the reference from a stub, e.g. ctxvm:3f2a9c0d1e2b4a5c#1048576/message/content/0/content' });
  const hash = await resolveObjectPrefix(store, parsed.hashPrefix);
  const bytes = await store.get(hash);
  const at = parsed.offset !== undefined ? { offset: parsed.offset } : {};
  const lineText = parsed.offset !== undefined ? lineInPack(bytes, hash, parsed.offset) : bytes.toString('utf8');
  if (parsed.pointer === '') return { hash, ...at, pointer: '', kind: 'text', content: lineText, text: lineText };
  let value: unknown;
  try {
    value = JSON.parse(lineText);
  } catch (cause) {
    throw new CtxvmError('E_INTEGRITY', `object ${hash}${parsed.offset !== undefined ? ` at ${parsed.offset}` : ''} is not a JSON line, so ${parsed.pointer} cannot be resolved`, { cause });
  }
  const content = resolvePointer(value, parsed.pointer);
  if (content === undefined) throw new NotFoundError(`object ${hash} has nothing at ${parsed.pointer}`);
  if (typeof content === 'string') return { hash, ...at, pointer: parsed.pointer, kind: 'text', content, text: content };
  return { hash, ...at, pointer: parsed.pointer, kind: 'json', content, text: JSON.stringify(content, null, 2) };
}
