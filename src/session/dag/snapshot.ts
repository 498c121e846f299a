/**
 * Taking a snapshot: capture the session's files (main log, subagent transcripts, tool-result
 * files) as chunks in the object store, write the manifest, then publish the catalog row.
 *
 * Crash safety, in this order: (1) a pending row names the snapshot id, (2) every object is put,
 * then all are referenced by holder `snapshot:<id>`, (3) the store is flushed, (4) one transaction inserts
 * the snapshot row with its object list and deletes the pending row. A process killed anywhere
 * before (4) leaves no snapshot row, only referenced objects that `collectGarbage` releases once
 * it sees the writer is gone; after (4) every object the row names is durable.
 */
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CtxvmError, UsageError } from '../../errors.js';
import type { ObjectInfo, ObjectStore } from '../../store/object-store.js';
import type { AgentKind } from '../context-model.js';
import { captureFile } from './capture.js';
import type { SessionCatalog, SnapshotObjectRef, SnapshotRecord, SnapshotToPublish } from './catalog.js';
import { currentChunker, MANIFEST_FORMAT, MANIFEST_VERSION, serializeManifest, type ManifestFile, type SnapshotFileRole, type SnapshotManifest } from './manifest.js';

/** Holder id under which a snapshot references its objects. */
export function snapshotHolder(snapshotId: string): string {
  return `snapshot:${snapshotId}`;
}

/** Longest snapshot, branch or tag name, characters. */
export const MAX_NAME_LENGTH = 128;
const NAME = /^[\p{L}\p{N}][\p{L}\p{N}._\-+@:/]*$/u;

/** Throws a `UsageError` unless `name` is a usable snapshot/branch name (or tag, with `what`). */
export function assertValidName(name: string, what = 'snapshot name'): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH || !NAME.test(name)) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(name)}`, {
      hint: `use 1 to ${MAX_NAME_LENGTH} letters, digits and . _ - + @ : /, starting with a letter or digit`,
    });
  }
}

/** A fresh random id: 16 lowercase hex characters. */
export function newDagId(): string {
  return randomBytes(8).toString('hex');
}

/** The session to capture. */
export interface SnapshotSource {
  agent: AgentKind;
  sessionId: string;
  /** The main session file. */
  path: string;
  /** Working directory of the session, when known. */
  project: string | null;
  /** Older Claude Code layouts: subagent transcripts beside the main file (`agent-*.jsonl`). */
  siblingFiles?: readonly string[];
}

/** A file to capture. */
export interface SourceFile {
  path: string;
  role: SnapshotFileRole;
  /** '/'-separated, relative to the main file's folder. */
  relativePath: string;
}

const isTempName = (name: string) => name.startsWith('.') && name.endsWith('.tmp');

async function walkFiles(dir: string, rel: string, role: SnapshotFileRole, out: SourceFile[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT' || (cause as NodeJS.ErrnoException).code === 'ENOTDIR') return;
    throw cause;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // Symbolic links are never followed: a snapshot holds the session's own files only.
    if (e.isDirectory()) await walkFiles(join(dir, e.name), `${rel}/${e.name}`, role, out);
    else if (e.isFile() && !isTempName(e.name)) out.push({ path: join(dir, e.name), role, relativePath: `${rel}/${e.name}` });
  }
}

/** The files of a session: main file first, then subagent transcripts and tool-result files. */
export async function collectSessionFiles(source: SnapshotSource): Promise<SourceFile[]> {
  const files: SourceFile[] = [{ path: source.path, role: 'main', relativePath: basename(source.path) }];
  if (source.agent !== 'claude') return files;
  const dir = dirname(source.path);
  const stem = basename(source.path).replace(/\.jsonl$/, '');
  await walkFiles(join(dir, stem, 'subagents'), `${stem}/subagents`, 'subagent', files);
  await walkFiles(join(dir, stem, 'tool-results'), `${stem}/tool-results`, 'tool-result', files);
  for (const sibling of [...(source.siblingFiles ?? [])].sort()) {
    if (dirname(sibling) === dir && sibling !== source.path) files.push({ path: sibling, role: 'subagent', relativePath: basename(sibling) });
  }
  return files;
}

/** Options shared by everything that writes a snapshot. */
export interface SnapshotWriteOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  name: string;
  description?: string;
  tags?: readonly string[];
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
  /** Id generator (default `newDagId`). */
  newId?: () => string;
  /** Recorded in the pending row so gc can tell a live writer from a dead one (default: this process). */
  writer?: { pid: number; host: string };
  /**
   * Stop before the catalog row is published: the result's `commit()` publishes it and `abandon()`
   * releases everything (a killed process leaves a pending row gc abandons). For writers that
   * publish the snapshot together with something else, such as `ctxvm trim` with its branch.
   */
  deferCommit?: boolean;
}

/** Options of `createSnapshot`. */
export interface CreateSnapshotOptions extends SnapshotWriteOptions {
  source: SnapshotSource;
  /** Files to capture (default: `collectSessionFiles(source)`). */
  files?: readonly SourceFile[];
  /** Called with bytes read so far and the total. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  signal?: AbortSignal;
}

/** What a snapshot stored. */
export interface SnapshotResult {
  id: string;
  name: string;
  /** Logical size of the captured files, bytes. */
  bytes: number;
  files: number;
  manifestHash: string;
  /** Distinct objects the snapshot references (chunks and manifest). */
  objects: number;
  /** Objects this snapshot added to the store (the rest were shared). */
  newObjects: number;
  /** Bytes those new objects occupy in the store. */
  newStoredBytes: number;
  /** Stored bytes of all the objects the snapshot references. */
  storedBytes: number;
  /** Bytes of unterminated, unparseable last lines left out (a line still being written). */
  droppedTailBytes: number;
  record: SnapshotRecord;
  /** With `deferCommit`: publishes the catalog row. */
  commit?: () => Promise<void>;
  /** With `deferCommit`: the row and objects `commit` publishes, for publishing with a branch (`branchFromSnapshot`). */
  toPublish?: SnapshotToPublish;
  /** With `deferCommit`: forgets the snapshot and releases its objects. */
  abandon?: () => Promise<void>;
}

/** Captures a session as a new immutable snapshot. */
export async function createSnapshot(options: CreateSnapshotOptions): Promise<SnapshotResult> {
  const { source } = options;
  assertValidName(options.name);
  await assertNameFree(options.catalog, options.name);
  const files = options.files ?? (await collectSessionFiles(source));
  const sizes = await Promise.all(files.map(async (f) => (await stat(f.path)).size));
  const total = sizes.reduce((a, b) => a + b, 0);
  return writeSnapshot(options, { agent: source.agent, sessionId: source.sessionId, project: source.project, sourcePath: source.path, origin: 'local' }, async (onStored) => {
    const captured: ManifestFile[] = [];
    let done = 0;
    for (const file of files) {
      const base = done;
      const result = await captureFile({
        store: options.store,
        path: file.path,
        role: file.role,
        relativePath: file.relativePath,
        onStored,
        ...(options.onProgress ? { onProgress: (n: number) => options.onProgress!(base + n, total) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      captured.push(result);
      done += result.bytes;
    }
    return captured;
  });
}

/** Throws `E_EXISTS` when a snapshot or branch already has `name`. */
export async function assertNameFree(catalog: SessionCatalog, name: string): Promise<void> {
  const used = await catalog.nameInUse(name);
  if (used) {
    throw new CtxvmError('E_EXISTS', `the name "${name}" is already used by a ${used}`, {
      hint: `choose another name${used === 'snapshot' ? `, or remove the existing snapshot with \`ctxvm rm ${name}\`` : ''}`,
    });
  }
}

/** What the snapshot is of. */
export interface SnapshotIdentity {
  agent: AgentKind;
  sessionId: string;
  project: string | null;
  sourcePath: string;
  origin: SnapshotRecord['origin'];
}

/**
 * The crash-safe write path shared by `createSnapshot` and `importSnapshot`: pending row, objects
 * (stored by `capture`, which reports each one to `onStored`), references, manifest, flush, row.
 */
export async function writeSnapshot(
  options: SnapshotWriteOptions,
  identity: SnapshotIdentity,
  capture: (onStored: (info: ObjectInfo) => void) => Promise<ManifestFile[]>,
): Promise<SnapshotResult> {
  const { catalog, store } = options;
  const now = options.now ?? Date.now;
  assertValidName(options.name);
  const tags = [...new Set(options.tags ?? [])].sort();
  for (const tag of tags) assertValidName(tag, 'tag');
  await assertNameFree(catalog, options.name);

  const id = (options.newId ?? newDagId)();
  const holder = snapshotHolder(id);
  const writer = options.writer ?? { pid: process.pid, host: hostname() };
  await catalog.beginSnapshot({ id, name: options.name, pid: writer.pid, host: writer.host, startedAtMs: now() });

  const objects = new Map<string, SnapshotObjectRef>();
  let newObjects = 0;
  let newStoredBytes = 0;
  // The store's writer lease keeps a concurrent gc (even with no grace period) from dropping what
  // this snapshot stored or deduplicated against until the references below are in place.
  const referenced: string[] = [];
  const onStored = (info: ObjectInfo) => {
    if (!objects.has(info.hash)) {
      objects.set(info.hash, { hash: info.hash, sizeBytes: info.size, storedBytes: info.storedSize });
      referenced.push(info.hash);
    }
    if (!info.existed) {
      newObjects++;
      newStoredBytes += info.storedSize;
    }
  };
  let refsAdded = false;
  const settleRefs = async () => {
    await store.refMany(referenced, holder);
    refsAdded = true;
  };
  try {
    const captured = await capture(onStored);
    const createdAtMs = now();
    const manifest: SnapshotManifest = {
      format: MANIFEST_FORMAT,
      version: MANIFEST_VERSION,
      agent: identity.agent,
      sessionId: identity.sessionId,
      project: identity.project,
      createdAtMs,
      chunker: currentChunker(),
      files: captured,
    };
    const manifestInfo = await store.put(serializeManifest(manifest));
    onStored(manifestInfo);
    await settleRefs();
    await store.flush();

    const parent = await catalog.latestSnapshotOfSession(identity.sessionId);
    const branch = await catalog.branchOfSession(identity.sessionId);
    const record: SnapshotRecord = {
      id,
      name: options.name,
      description: options.description ?? null,
      tags,
      agent: identity.agent,
      sessionId: identity.sessionId,
      sourcePath: identity.sourcePath,
      project: identity.project,
      manifestHash: manifestInfo.hash,
      bytes: captured.reduce((n, f) => n + f.bytes, 0),
      mainBytes: captured[0]!.bytes,
      files: captured.length,
      parentSnapshotId: parent?.id ?? null,
      sourceBranchId: branch?.id ?? null,
      origin: identity.origin,
      createdAtMs,
      stats: null,
    };
    const publish = () => catalog.commitSnapshot(record, [...objects.values()]);
    const abandon = async () => {
      await store.unrefMany(referenced, holder).catch(() => undefined);
      await store.flush().catch(() => undefined);
      await catalog.abandonSnapshot(id).catch(() => {});
    };
    if (!options.deferCommit) await publish();
    return {
      id,
      name: record.name,
      bytes: record.bytes,
      files: record.files,
      manifestHash: record.manifestHash,
      objects: objects.size,
      newObjects,
      newStoredBytes,
      storedBytes: [...objects.values()].reduce((n, o) => n + o.storedBytes, 0),
      droppedTailBytes: captured.reduce((n, f) => n + (f.droppedTailBytes ?? 0), 0),
      record,
      ...(options.deferCommit ? { commit: publish, abandon, toPublish: { record, objects: [...objects.values()] } } : {}),
    };
  } catch (error) {
    // Best effort: what is left behind here is exactly what gc releases after a crash.
    if (refsAdded) await store.unrefMany(referenced, holder).catch(() => undefined);
    await catalog.abandonSnapshot(id).catch(() => {});
    throw error;
  }
}
