/**
 * Rebuilds captured files from the object store: the text stream's chunks are decoded with the
 * UUID side stream and checked against the size and sha256 recorded in the manifest. Streaming
 * throughout; files are written atomically, so a failed check leaves nothing behind.
 */
import { join } from 'node:path';
import { createAtomicWriter, type AtomicWriteOptions } from '../../core/atomic-file.js';
import { createSha256 } from '../../core/hash.js';
import { IntegrityError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { isSafeRelativePath, type ManifestFile, type SnapshotManifest } from './manifest.js';
import { UuidLiftDecoder, UuidLiftError } from './uuid-lift.js';

/** The captured bytes of one file, verified at the end (an `IntegrityError` if they differ). */
export async function* readSnapshotFile(store: ObjectStore, file: ManifestFile): AsyncGenerator<Buffer> {
  let nextUuid = 0;
  const decoder = new UuidLiftDecoder(async () => {
    const chunk = file.uuids[nextUuid++];
    return chunk ? store.get(chunk[0]) : undefined;
  });
  const hasher = createSha256();
  const what = `snapshot file ${file.path}`;
  try {
    for (const [hash] of file.text) {
      for await (const piece of store.getStream(hash) as AsyncIterable<Buffer>) {
        const out = await decoder.push(piece);
        if (out.length === 0) continue;
        hasher.update(out);
        if (hasher.bytes > file.bytes) throw new IntegrityError(`${what}: rebuilds to more than the ${file.bytes} bytes recorded`);
        yield out;
      }
    }
    await decoder.end();
  } catch (error) {
    if (error instanceof UuidLiftError) throw new IntegrityError(`${what}: ${error.message}`, { cause: error });
    throw error;
  }
  if (hasher.bytes !== file.bytes) throw new IntegrityError(`${what}: rebuilds to ${hasher.bytes} bytes, ${file.bytes} recorded`);
  const digest = hasher.digestHex();
  if (digest !== file.sha256) throw new IntegrityError(`${what}: rebuilt content hashes to ${digest}, ${file.sha256} recorded`);
}

/** Writes one captured file to `target` atomically, verified before it becomes visible. */
export async function materializeFile(store: ObjectStore, file: ManifestFile, target: string, options: AtomicWriteOptions = {}): Promise<void> {
  const writer = await createAtomicWriter(target, options);
  try {
    for await (const bytes of readSnapshotFile(store, file)) await writer.write(bytes);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await writer.commit();
}

/** A materialized file: where it is and what it is. */
export interface MaterializedFile {
  role: ManifestFile['role'];
  /** Path relative to the output folder. */
  relativePath: string;
  /** Absolute path written. */
  path: string;
  bytes: number;
}

/** Options of `materializeSnapshot`. */
export interface MaterializeOptions extends AtomicWriteOptions {
  /** Only the main session file (default: every captured file). */
  mainOnly?: boolean;
}

/** Writes a snapshot's files under `dir`, keeping their layout; returns them, main file first. */
export async function materializeSnapshot(store: ObjectStore, manifest: SnapshotManifest, dir: string, options: MaterializeOptions = {}): Promise<MaterializedFile[]> {
  const files = options.mainOnly ? manifest.files.slice(0, 1) : manifest.files;
  const out: MaterializedFile[] = [];
  for (const file of files) {
    // parseManifest already checked this; a manifest built in memory is checked here.
    if (!isSafeRelativePath(file.path)) throw new IntegrityError(`snapshot file path ${JSON.stringify(file.path)} is not a safe relative path`);
    const path = join(dir, ...file.path.split('/'));
    await materializeFile(store, file, path, options);
    out.push({ role: file.role, relativePath: file.path, path, bytes: file.bytes });
  }
  return out;
}
