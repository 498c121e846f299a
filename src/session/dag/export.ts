/**
 * `ctxvm export`: one snapshot as a tar archive (see archive-format.ts), written atomically and
 * streamed: the files are rebuilt from the object store chunk by chunk and verified against the
 * snapshot manifest as they are written.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { createAtomicWriter } from '../../core/atomic-file.js';
import { createSha256 } from '../../core/hash.js';
import { NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { EXPORT_FORMAT, EXPORT_MANIFEST_MEMBER, EXPORT_VERSION, FILES_PREFIX, type ExportManifest } from './archive-format.js';
import type { SessionCatalog } from './catalog.js';
import { loadManifest, type ManifestFile } from './manifest.js';
import { readSnapshotFile } from './materialize.js';
import { TAR_END, tarFileHeader, tarPadding } from './tar.js';

/** Options of `exportSnapshot`. */
export interface ExportOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Snapshot name, id or id prefix. */
  ref: string;
  /** Archive to write (atomically). */
  output: string;
  /** gzip the archive (default: when `output` ends in .gz or .tgz). */
  gzip?: boolean;
  now?: () => number;
}

/** What `exportSnapshot` wrote. */
export interface ExportResult {
  path: string;
  /** Archive size, bytes. */
  bytes: number;
  /** sha256 of the archive. */
  sha256: string;
  gzip: boolean;
  snapshot: { id: string; name: string };
  files: number;
}

/** Writes one snapshot as a tar archive. */
export async function exportSnapshot(options: ExportOptions): Promise<ExportResult> {
  const { catalog, store } = options;
  const snapshot = await catalog.findSnapshot(options.ref);
  if (!snapshot) throw new NotFoundError(`no snapshot named ${JSON.stringify(options.ref)}`, { hint: 'run `ctxvm list` to see the snapshots' });
  const manifest = await loadManifest(store, snapshot.manifestHash);
  const gzip = options.gzip ?? /\.(t?gz)$/i.test(options.output);
  const exported: ExportManifest = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAtMs: (options.now ?? Date.now)(),
    snapshot: {
      id: snapshot.id,
      name: snapshot.name,
      description: snapshot.description,
      tags: snapshot.tags,
      agent: snapshot.agent,
      sessionId: snapshot.sessionId,
      project: snapshot.project,
      sourcePath: snapshot.sourcePath,
      createdAtMs: snapshot.createdAtMs,
    },
    files: manifest.files.map((f) => ({ member: FILES_PREFIX + f.path, role: f.role, path: f.path, bytes: f.bytes, sha256: f.sha256, mtimeMs: f.mtimeMs })),
  };
  const manifestBytes = Buffer.from(JSON.stringify(exported, null, 2) + '\n', 'utf8');
  async function* tar(): AsyncGenerator<Buffer> {
    yield tarFileHeader(EXPORT_MANIFEST_MEMBER, manifestBytes.length, exported.exportedAtMs);
    yield manifestBytes;
    yield tarPadding(manifestBytes.length);
    for (const file of manifest.files as ManifestFile[]) {
      yield tarFileHeader(FILES_PREFIX + file.path, file.bytes, file.mtimeMs);
      // readSnapshotFile verifies the rebuilt bytes against the manifest as it goes
      yield* readSnapshotFile(store, file);
      yield tarPadding(file.bytes);
    }
    yield TAR_END;
  }
  const writer = await createAtomicWriter(options.output);
  const hasher = createSha256();
  try {
    const sink = async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        hasher.update(chunk);
        await writer.write(chunk);
      }
    };
    if (gzip) await pipeline(Readable.from(tar()), createGzip(), sink);
    else await sink(tar());
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await writer.commit();
  return { path: options.output, bytes: hasher.bytes, sha256: hasher.digestHex(), gzip, snapshot: { id: snapshot.id, name: snapshot.name }, files: manifest.files.length };
}

