/**
 * Where the fs object store keeps things under its root:
 *
 *   <root>/<aa>/<bb>/<hash>             a loose object (aa, bb = first two byte pairs of the hash)
 *   <root>/packs/pack-<id>.pack         many objects and their index (objects-fs-packs.ts)
 *   <root>/refs/<holderId>.<rnd>        one holder's references to many objects (objects-fs-bundles.ts)
 *   <root>/refs/packed.<rnd>            every holder's references, merged by gc (binary)
 *   <root>/refs/bundles                 empty file marking that layout (older stores: a folder of bundles)
 *   <root>/refs/<aa>/<hash>/<holderId>  one marker file per holder (older stores; read and merged)
 *   <root>/leases/, gc.lock, refs.lock  writer leases and locks (objects-fs-lease.ts)
 *   <root>/.staging/                    putStream writes here before the hash is known
 *   <root>/.trash/                      gc moves an object here before its final decision
 *
 * Every path built from a hash goes through `assertSha256Hex` first, so a crafted "hash" such as
 * "../../etc/passwd" never reaches the file system.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { assertSha256Hex, sha256Hex } from '../../core/hash.js';

/** Paths of one fs object store. */
export interface FsLayout {
  readonly root: string;
  readonly refsRoot: string;
  readonly stagingDir: string;
  readonly trashDir: string;
  /** `<root>/<aa>/<bb>`; validates the hash. */
  objectDir(hash: string): string;
  /** `<root>/<aa>/<bb>/<hash>`; validates the hash. */
  objectPath(hash: string): string;
  /** `<root>/refs/<aa>/<hash>`; validates the hash. */
  refDir(hash: string): string;
  /** The marker file of `holder` for `hash`. */
  refPath(hash: string, holder: string): string;
  /** A fresh, unique staging target whose name `cleanupStaleTempFiles` recognises. */
  stagingTarget(): string;
  /** A fresh, unique trash path for `hash`. */
  trashPath(hash: string): string;
}

/** Hex characters of sha256(holder) used as its marker file name: 128 bits, collision-free in practice. */
const HOLDER_ID_CHARS = 32;

/** Names of the two fan-out levels: two lowercase hex characters. */
export const FANOUT_NAME = /^[0-9a-f]{2}$/;

export function createFsLayout(root: string): FsLayout {
  const refsRoot = join(root, 'refs');
  const stagingDir = join(root, '.staging');
  const trashDir = join(root, '.trash');
  const objectDir = (hash: string) => {
    assertSha256Hex(hash);
    return join(root, hash.slice(0, 2), hash.slice(2, 4));
  };
  const refDir = (hash: string) => {
    assertSha256Hex(hash);
    return join(refsRoot, hash.slice(0, 2), hash);
  };
  return {
    root,
    refsRoot,
    stagingDir,
    trashDir,
    objectDir,
    objectPath: (hash) => join(objectDir(hash), hash),
    refDir,
    refPath: (hash, holder) => join(refDir(hash), holderId(holder)),
    // Dot-prefixed and .tmp-suffixed, so a crash between commit and publish leaves a file that
    // cleanupStaleTempFiles removes, like the atomic writer's own temp files.
    stagingTarget: () => join(stagingDir, `.staged-${process.pid}-${randomBytes(8).toString('hex')}.tmp`),
    // The name records when the object was moved aside, so a later gc can tell an abandoned
    // entry (crashed gc) from one a running gc is still deciding about.
    trashPath: (hash) => {
      assertSha256Hex(hash);
      return join(trashDir, `${hash}.${Date.now()}.${randomBytes(4).toString('hex')}`);
    },
  };
}

/** File name of `holder`'s marker: a hash, so any holder string is a safe, fixed-length name. */
export function holderId(holder: string): string {
  return sha256Hex(holder).slice(0, HOLDER_ID_CHARS);
}

/** Parses a trash entry name back into its hash and the wall-clock time it was moved, Unix ms. */
export function parseTrashName(name: string): { hash: string; movedAtMs: number } | undefined {
  const match = /^([0-9a-f]{64})\.(\d+)\.[0-9a-f]+$/.exec(name);
  if (!match) return undefined;
  return { hash: match[1]!, movedAtMs: Number(match[2]) };
}

/** The errno code of a Node.js system error, if any. */
export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export { fsyncDirectory } from '../../core/atomic-file.js';
