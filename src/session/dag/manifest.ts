/**
 * The snapshot manifest: a versioned JSON object in the object store listing, for every captured
 * file, its role, its path relative to the session's folder, its size and sha256, and the chunks
 * that rebuild it (text stream and UUID side stream, see uuid-lift.ts). A snapshot is immutable
 * because its manifest is content-addressed and the chunks it names are.
 */
import { isSha256Hex } from '../../core/hash.js';
import { IntegrityError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { AgentKind } from '../context-model.js';
import { CHUNK_AVG_BYTES, CHUNK_MAX_BYTES, CHUNK_MIN_BYTES, LINE_CHUNKER_ID } from './line-chunker.js';
import { UUID_LIFT_ID } from './uuid-lift.js';

/** `format` of a snapshot manifest. */
export const MANIFEST_FORMAT = 'ctxvm.snapshot';
/** Current manifest version. */
export const MANIFEST_VERSION = 1;

/** What a captured file is to its session. */
export type SnapshotFileRole = 'main' | 'subagent' | 'tool-result';

/** One stored piece: [sha256 address, uncompressed bytes]. */
export type ManifestChunk = [hash: string, bytes: number];

/** One captured file. */
export interface ManifestFile {
  role: SnapshotFileRole;
  /** Path relative to the folder holding the main session file, '/'-separated. */
  path: string;
  /** Size of the captured bytes. */
  bytes: number;
  /** sha256 of the captured bytes. */
  sha256: string;
  /** Modification time of the file when captured, Unix ms. */
  mtimeMs: number;
  /** How the chunks encode the bytes (`uuid-lift/1`). */
  encoding: string;
  /** Chunks of the text stream, in order. */
  text: ManifestChunk[];
  /** Chunks of the UUID side stream, in order. */
  uuids: ManifestChunk[];
  /** Bytes of an unterminated, unparseable last line left out (a line still being written). */
  droppedTailBytes?: number;
}

/** A snapshot manifest. */
export interface SnapshotManifest {
  format: typeof MANIFEST_FORMAT;
  version: number;
  agent: AgentKind;
  sessionId: string;
  project: string | null;
  /** Unix ms. */
  createdAtMs: number;
  chunker: { id: string; minBytes: number; avgBytes: number; maxBytes: number };
  /** The main session file first. */
  files: ManifestFile[];
}

/** The chunker settings written into new manifests. */
export function currentChunker(): SnapshotManifest['chunker'] {
  return { id: LINE_CHUNKER_ID, minBytes: CHUNK_MIN_BYTES, avgBytes: CHUNK_AVG_BYTES, maxBytes: CHUNK_MAX_BYTES };
}

/** True for a relative, '/'-separated path without empty, '.', '..' or drive segments. */
export function isSafeRelativePath(path: string): boolean {
  if (typeof path !== 'string' || path.length === 0 || path.length > 4096) return false;
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0') || /^[a-zA-Z]:/.test(path)) return false;
  return path.split('/').every((seg) => seg.length > 0 && seg !== '.' && seg !== '..');
}

function fail(what: string, detail: string): never {
  throw new IntegrityError(`${what}: invalid snapshot manifest (${detail})`);
}

function checkChunks(what: string, value: unknown, field: string): ManifestChunk[] {
  if (!Array.isArray(value)) fail(what, `${field} is not a list`);
  return value.map((c, i) => {
    if (!Array.isArray(c) || c.length !== 2 || !isSha256Hex(c[0]) || !Number.isSafeInteger(c[1]) || (c[1] as number) < 0) {
      fail(what, `${field}[${i}] is not [sha256, bytes]`);
    }
    return [c[0], c[1]] as ManifestChunk;
  });
}

/** Parses and checks a manifest; `what` names it in errors. */
export function parseManifest(bytes: Buffer | string, what: string): SnapshotManifest {
  let value: unknown;
  try {
    value = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (cause) {
    fail(what, `not JSON: ${(cause as Error).message}`);
  }
  const m = value as Partial<SnapshotManifest> | null;
  if (!m || typeof m !== 'object' || m.format !== MANIFEST_FORMAT) fail(what, 'not a ctxvm snapshot manifest');
  if (m.version !== MANIFEST_VERSION) {
    throw new IntegrityError(`${what}: snapshot manifest version ${String(m.version)} is not supported (expected ${MANIFEST_VERSION})`, { hint: 'upgrade ctxvm' });
  }
  if (m.agent !== 'claude' && m.agent !== 'codex') fail(what, `unknown agent ${JSON.stringify(m.agent)}`);
  if (typeof m.sessionId !== 'string' || !m.sessionId) fail(what, 'missing sessionId');
  if (!Array.isArray(m.files) || m.files.length === 0) fail(what, 'no files');
  const seen = new Set<string>();
  const files = m.files.map((f, i) => {
    const at = `files[${i}]`;
    if (!f || typeof f !== 'object') fail(what, `${at} is not an object`);
    if (f.role !== 'main' && f.role !== 'subagent' && f.role !== 'tool-result') fail(what, `${at}.role ${JSON.stringify(f.role)}`);
    if (!isSafeRelativePath(f.path)) fail(what, `${at}.path ${JSON.stringify(f.path)} is not a safe relative path`);
    if (seen.has(f.path)) fail(what, `${at}.path ${f.path} is listed twice`);
    seen.add(f.path);
    if (!Number.isSafeInteger(f.bytes) || f.bytes < 0) fail(what, `${at}.bytes`);
    if (!isSha256Hex(f.sha256)) fail(what, `${at}.sha256`);
    if (f.encoding !== UUID_LIFT_ID) fail(what, `${at}.encoding ${JSON.stringify(f.encoding)} is not supported`);
    return { ...f, text: checkChunks(what, f.text, `${at}.text`), uuids: checkChunks(what, f.uuids, `${at}.uuids`) };
  });
  if (files[0]!.role !== 'main') fail(what, 'the first file is not the main session file');
  return { ...(m as SnapshotManifest), files };
}

/** Serialises a manifest (stable key order, no whitespace). */
export function serializeManifest(manifest: SnapshotManifest): Buffer {
  return Buffer.from(JSON.stringify(manifest), 'utf8');
}

/** Reads and parses the manifest stored at `hash`. */
export async function loadManifest(store: ObjectStore, hash: string): Promise<SnapshotManifest> {
  return parseManifest(await store.get(hash), `manifest ${hash}`);
}
