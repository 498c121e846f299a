/**
 * What `$CTXVM_HOME` occupies on disk, the way `du` counts it: allocated blocks of every file and
 * folder (a folder costs a block too; a 10-byte file costs 4 KiB on most file systems), split by
 * what the bytes are for. Symbolic links are counted, never followed.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Bytes on disk by part of the home folder. */
export interface DiskBytes {
  /** Everything below the home folder, bytes. */
  total: number;
  /** Loose objects (one file each, in two levels of folders), bytes. */
  looseObjects: number;
  /** Pack files and their folder, bytes. */
  packs: number;
  /** Reference files, leases and locks of the object store, bytes. */
  refs: number;
  /** The SQLite database and its journal files, bytes (0 when the warm store is PostgreSQL). */
  database: number;
  /** Scratch, staging and anything else, bytes. */
  other: number;
  /** Files and folders counted. */
  files: number;
  folders: number;
}

function allocated(info: { blocks?: number; size: number }): number {
  // st_blocks is in 512-byte units where the platform reports it (not on Windows)
  return typeof info.blocks === 'number' && info.blocks > 0 ? info.blocks * 512 : info.size;
}

/** Measures `home`; `objectsDir` and `dbPath` say which parts are which (dbPath undefined for PostgreSQL). */
export async function measureDisk(home: string, objectsDir: string, dbPath: string | undefined): Promise<DiskBytes> {
  const out: DiskBytes = { total: 0, looseObjects: 0, packs: 0, refs: 0, database: 0, other: 0, files: 0, folders: 0 };
  const classify = (path: string): keyof Pick<DiskBytes, 'looseObjects' | 'packs' | 'refs' | 'database' | 'other'> => {
    if (dbPath && (path === dbPath || path.startsWith(`${dbPath}-`))) return 'database';
    const rel = relative(objectsDir, path);
    if (rel === '') return 'looseObjects'; // the objects folder itself
    if (rel.startsWith('..')) return 'other';
    const top = rel.split(sep)[0]!;
    if (top === 'packs') return 'packs';
    if (top === 'refs' || top === 'leases' || top.endsWith('.lock')) return 'refs';
    if (/^[0-9a-f]{2}$/.test(top)) return 'looseObjects';
    return 'other';
  };
  const walk = async (path: string): Promise<void> => {
    let info;
    try {
      info = await lstat(path);
    } catch {
      return; // removed while we looked
    }
    const bytes = allocated(info);
    out.total += bytes;
    out[classify(path)] += bytes;
    if (!info.isDirectory()) {
      out.files++;
      return;
    }
    out.folders++;
    let names: string[] = [];
    try {
      names = await readdir(path);
    } catch {
      return;
    }
    for (const name of names) await walk(join(path, name));
  };
  await walk(home);
  return out;
}
