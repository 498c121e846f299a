/**
 * Page-in: fetch one paged-out payload exactly as the tool returned it, by either reference a
 * stub offers:
 *
 * - the agent's own id of the call — `<tool_use_id>` for its result, `<tool_use_id>/<field>` for
 *   an input field (Codex: `<call_id>`, `<call_id>/<argument>`). The stub costs nothing extra: the
 *   id is already beside it. The trimmed line holding the id is found in the session files given
 *   (or searched for under the agents' folders), and the original line its annotation names is
 *   read back and checked against the digest the trim recorded;
 * - `ctxvm:<pack>#<offset><json pointer>` (images, and stubs of earlier builds; `ctxvm:<hash>#<json
 *   pointer>` from trims made before packs): the line at that offset of that pack. The offset must
 *   start a line of the pack, and a prefix that several packs share is settled by which of them
 *   holds a line there with something at the pointer.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readLines } from '../../core/jsonl.js';
import { ByteBuffer } from '../../core/byte-buffer.js';
import { CtxvmError, NotFoundError, UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { ANNOTATION_KEY, mayCarryAnnotation, pageInPart, readAnnotation } from './annotation.js';
import { unlift } from './lift.js';
import { PackReader } from './pack-reader.js';
import { isStub, parsePayloadRef, resolvePointer } from './stub.js';

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
  /** The trimmed file the reference was found in (references by id). */
  file?: string;
  /** Whether a digest recorded at trim time vouched for the original line. */
  verified: boolean;
}

export interface PageInOptions {
  /** Trimmed session files to look in first for a reference by id. */
  files?: string[];
  /** Folders searched (recursively, newest files first) for a reference by id after `files`. */
  searchRoots?: string[];
  signal?: AbortSignal;
}

/** Finds the objects whose address starts with `prefix`. */
async function objectsByPrefix(store: ObjectStore, prefix: string): Promise<string[]> {
  if (prefix.length === 64) return [prefix];
  return store.findByPrefix(prefix);
}

/** Finds the one object whose address starts with `prefix`. */
export async function resolveObjectPrefix(store: ObjectStore, prefix: string): Promise<string> {
  const matches = await objectsByPrefix(store, prefix);
  if (matches.length === 0) throw new NotFoundError(`no paged-out object starts with ${prefix}`, { hint: 'check CTXVM_HOME: page-in reads the object store the trim wrote to' });
  if (matches.length > 1) throw new UsageError(`reference ${prefix} is ambiguous (${matches.length} objects)`, { hint: 'use more hex digits of the hash' });
  return matches[0]!;
}

/**
 * The original line at `offset` in a pack, decoded; undefined when `offset` does not start a line.
 * Its UUIDs outside the content were lifted out (they are kept with the trimmed file) and read
 * as the nil UUID; content is exact.
 */
function lineInPack(pack: Buffer, offset: number): string | undefined {
  if (offset >= pack.length || (offset > 0 && pack[offset - 1] !== 0x0a)) return undefined;
  const nl = pack.indexOf(0x0a, offset);
  const out = new ByteBuffer(Math.max(64, (nl === -1 ? pack.length : nl) - offset + 1024));
  unlift(pack.subarray(offset, nl === -1 ? pack.length : nl + 1), undefined, out);
  const text = out.view().toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function payloadOf(content: unknown, base: Omit<PagedPayload, 'kind' | 'content' | 'text'>): PagedPayload {
  if (typeof content === 'string') return { ...base, kind: 'text', content, text: content };
  return { ...base, kind: 'json', content, text: JSON.stringify(content, null, 2) };
}

async function pageInByPackRef(store: ObjectStore, ref: string): Promise<PagedPayload> {
  const parsed = parsePayloadRef(ref)!;
  const candidates = await objectsByPrefix(store, parsed.hashPrefix);
  if (candidates.length === 0) throw new NotFoundError(`no paged-out object starts with ${parsed.hashPrefix}`, { hint: 'check CTXVM_HOME: page-in reads the object store the trim wrote to' });
  const found: PagedPayload[] = [];
  let why = '';
  for (const hash of candidates) {
    const bytes = await store.get(hash);
    const at = parsed.offset !== undefined ? { offset: parsed.offset } : {};
    const lineText = parsed.offset !== undefined ? lineInPack(bytes, parsed.offset) : bytes.toString('utf8');
    if (lineText === undefined) {
      why = `offset ${parsed.offset} does not start a line of pack ${hash}`;
      continue;
    }
    if (parsed.pointer === '') {
      found.push({ hash, ...at, pointer: '', kind: 'text', content: lineText, text: lineText, verified: true });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(lineText);
    } catch {
      why = `object ${hash}${parsed.offset !== undefined ? ` at ${parsed.offset}` : ''} is not a JSON line, so ${parsed.pointer} cannot be resolved`;
      continue;
    }
    const content = resolvePointer(value, parsed.pointer);
    if (content === undefined) {
      why = `object ${hash} has nothing at ${parsed.pointer}`;
      continue;
    }
    found.push(payloadOf(content, { hash, ...at, pointer: parsed.pointer, verified: true }));
  }
  if (found.length === 1) return found[0]!;
  if (found.length > 1) throw new UsageError(`reference ${ref} is ambiguous (${found.length} objects hold a line there)`, { hint: 'use more hex digits of the hash' });
  throw new CtxvmError(candidates.length === 1 ? 'E_INTEGRITY' : 'E_NOT_FOUND', `${ref}: ${why}`, { hint: 'the reference was changed after it was printed; copy it from the stub again' });
}

/** A call id as agents write them (`toolu_…`, `call_…`, `call_function_…_1`), with an optional field. */
const ID_REF = /^([A-Za-z][A-Za-z0-9_.:-]{5,199})(?:\/([A-Za-z0-9_.-]{1,100}))?$/;

/** The payload a call id (and field) names in one original line, or undefined. */
function payloadById(value: Record<string, unknown>, id: string, field: string | undefined): { content: unknown; pointer: string } | undefined {
  const message = value.message as { content?: unknown } | undefined;
  if (message && Array.isArray(message.content)) {
    for (const [i, b] of (message.content as Record<string, unknown>[]).entries()) {
      if (!b || typeof b !== 'object') continue;
      if (!field && b.type === 'tool_result' && b.tool_use_id === id) return { content: b.content, pointer: `/message/content/${i}/content` };
      if (field && b.type === 'tool_use' && b.id === id && b.input && typeof b.input === 'object' && Object.hasOwn(b.input, field)) {
        return { content: (b.input as Record<string, unknown>)[field], pointer: `/message/content/${i}/input/${field}` };
      }
    }
  }
  const payload = value.payload as Record<string, unknown> | undefined;
  if (payload && typeof payload === 'object' && payload.call_id === id) {
    if (!field && typeof payload.type === 'string' && payload.type.endsWith('_output')) return { content: payload.output, pointer: '/payload/output' };
    if (field && payload.type === 'custom_tool_call' && field === 'input') return { content: payload.input, pointer: '/payload/input' };
    if (field && typeof payload.arguments === 'string') {
      try {
        const args = JSON.parse(payload.arguments) as Record<string, unknown>;
        if (args && typeof args === 'object' && Object.hasOwn(args, field)) return { content: args[field], pointer: `/payload/arguments:${field}` };
      } catch {
        // not JSON arguments
      }
    }
  }
  return undefined;
}

/** A payload that is itself a stub (a string, or a one-block list holding one). */
function isStubPayload(content: unknown): boolean {
  if (isStub(content)) return true;
  return Array.isArray(content) && content.length === 1 && isStub((content[0] as { text?: unknown } | undefined)?.text);
}

async function* sessionFiles(options: PageInOptions): AsyncGenerator<string> {
  const seen = new Set<string>();
  for (const f of options.files ?? []) {
    if (!seen.has(f)) {
      seen.add(f);
      yield f;
    }
  }
  for (const root of options.searchRoots ?? []) {
    const found: { path: string; mtime: number }[] = [];
    const walk = async (dir: string, depth: number) => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = join(dir, e.name);
        if (e.isDirectory() && depth < 8) await walk(p, depth + 1);
        else if (e.isFile() && e.name.endsWith('.jsonl')) found.push({ path: p, mtime: (await stat(p)).mtimeMs });
      }
    };
    await walk(root, 0);
    for (const f of found.sort((a, b) => b.mtime - a.mtime)) {
      if (!seen.has(f.path)) {
        seen.add(f.path);
        yield f.path;
      }
    }
  }
}

async function pageInById(store: ObjectStore, id: string, field: string | undefined, options: PageInOptions): Promise<PagedPayload> {
  if (!options.files?.length && !options.searchRoots?.length) {
    throw new UsageError(`${id} is a call id: page-in needs the trimmed session it is in`, { hint: 'pass the session file (--session), or a ctxvm:<pack>#<offset>/… reference' });
  }
  const needle = Buffer.from(id);
  const packs = new PackReader(store);
  let problem: unknown;
  for await (const file of sessionFiles(options)) {
    try {
      for await (const raw of readLines(file, options.signal ? { signal: options.signal } : {})) {
        if (!raw.bytes.includes(needle) || !mayCarryAnnotation(raw.bytes)) continue;
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(raw.text) as Record<string, unknown>;
        } catch {
          continue;
        }
        const ann = readAnnotation(line, { file, line: raw.line, byteOffset: raw.byteOffset });
        let part = ann ? pageInPart(ann) : undefined;
        // a stub inside the original (a trim of a branch of a trimmed session) is followed further
        for (let depth = 0; part && depth < 8; depth++) {
          const { bytes, verified } = await packs.readChecked(part);
          const original = JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, '')) as Record<string, unknown>;
          const hit = payloadById(original, id, field);
          if (!hit) break;
          const next = pageInPart(original[ANNOTATION_KEY]);
          if (isStubPayload(hit.content) && next) {
            part = next;
            continue;
          }
          return payloadOf(hit.content, { hash: part[0], offset: part[1], pointer: hit.pointer, file, verified });
        }
      }
    } catch (error) {
      // an unreadable or damaged file is reported only if no other file has the payload
      problem ??= error;
    }
  }
  if (problem) throw problem;
  throw new NotFoundError(`no trimmed line with ${id}${field ? `/${field}` : ''} was found`, { hint: 'pass the trimmed session file with --session, or check CTXVM_HOME' });
}

export async function pageIn(store: ObjectStore, ref: string, options: PageInOptions = {}): Promise<PagedPayload> {
  const trimmed = ref.trim();
  if (parsePayloadRef(trimmed)) return pageInByPackRef(store, trimmed);
  const byId = ID_REF.exec(trimmed);
  if (byId) return pageInById(store, byId[1]!, byId[2], options);
  throw new UsageError(`not a page-in reference: ${JSON.stringify(ref)}`, {
    hint: 'pass the tool_use_id beside a stub (toolu_…, call_…), <id>/<input field>, or a ctxvm:<pack>#<offset>/<pointer> reference from a stub',
  });
}
