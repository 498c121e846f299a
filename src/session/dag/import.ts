/**
 * `ctxvm import`: an export archive (see archive-format.ts) becomes a snapshot here. The archive
 * is treated as hostile: only regular-file members, only the paths its manifest lists (relative,
 * no `..`, no absolute or drive paths, no backslashes), exact sizes, checksums verified before the
 * snapshot is published, and bounded memory whatever the archive claims.
 *
 * With `cwd`, the project directory is remapped: `cwd` fields in the JSONL lines that name the
 * original project (or a folder inside it) are rewritten to the new one, and the snapshot is
 * recorded under the new project (which also decides Claude Code's project folder name when the
 * snapshot is branched).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { createSha256 } from '../../core/hash.js';
import { IntegrityError, ioError } from '../../errors.js';
import { archiveError, EXPORT_MANIFEST_MEMBER, MAX_EXPORT_MANIFEST_BYTES, parseExportManifest } from './archive-format.js';
import { captureBytes } from './capture.js';
import { isSafeRelativePath, type ManifestFile } from './manifest.js';
import { writeSnapshot, type SnapshotResult, type SnapshotWriteOptions } from './snapshot.js';
import { readTar } from './tar.js';

/** Why a member name is unsafe to even consider, or undefined when it is a plain relative path. */
function unsafeMemberReason(path: string): string | undefined {
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) return 'an absolute path';
  if (path.includes('\\')) return 'a path with backslashes';
  if (path.includes('\0')) return 'a path with a NUL byte';
  if (path.split('/').some((seg) => seg === '..')) return 'a path that climbs out of the archive (..)';
  if (!isSafeRelativePath(path)) return 'not a plain relative path';
  return undefined;
}

const TYPE_WORDS: Record<string, string> = {
  hardlink: 'a hard link',
  symlink: 'a symbolic link',
  'char-device': 'a character device',
  'block-device': 'a block device',
  directory: 'a directory',
  fifo: 'a FIFO',
  'pax-header': 'a pax extended header',
  'gnu-longname': 'a GNU long-name record',
  other: 'an unknown member type',
};

/** Rewrites `cwd` fields naming `from` (or a folder inside it) to `to`, in one JSONL line. */
export function remapCwdInLine(line: Buffer, from: string, to: string): Buffer {
  const fromJson = JSON.stringify(from).slice(0, -1); // opening quote + escaped path, no closing quote
  const toJson = Buffer.from(JSON.stringify(to).slice(0, -1), 'utf8');
  let out: Buffer[] | undefined;
  let last = 0;
  for (const key of ['"cwd":', '"cwd": ']) {
    const pattern = Buffer.from(key + fromJson, 'utf8');
    for (let i = line.indexOf(pattern); i !== -1; i = line.indexOf(pattern, i + pattern.length)) {
      const j = i + pattern.length;
      const next = line[j];
      // The path ends (closing quote) or continues into a subfolder ('/' or an escaped '\').
      const boundary = next === 0x22 || next === 0x2f || (next === 0x5c && line[j + 1] === 0x5c);
      if (!boundary || i < last) continue;
      out ??= [];
      out.push(line.subarray(last, i), Buffer.from(key, 'utf8'), toJson);
      last = j;
    }
    if (out) break; // one spelling per file in practice; never rewrite twice
  }
  if (!out) return line;
  out.push(line.subarray(last));
  return Buffer.concat(out);
}

/** Applies `map` to each line (with its '\n') of a block stream. */
async function* mapLines(blocks: AsyncIterable<Buffer>, map: (line: Buffer) => Buffer): AsyncGenerator<Buffer> {
  let carry: Buffer[] = [];
  for await (const block of blocks) {
    let from = 0;
    const out: Buffer[] = [];
    for (let nl = block.indexOf(0x0a); nl !== -1; nl = block.indexOf(0x0a, from)) {
      const piece = block.subarray(from, nl + 1);
      out.push(map(carry.length ? Buffer.concat([...carry, piece]) : piece));
      carry = [];
      from = nl + 1;
    }
    if (from < block.length) carry.push(block.subarray(from));
    if (out.length) yield Buffer.concat(out);
  }
  if (carry.length) yield map(Buffer.concat(carry));
}

/**
 * Most bytes an archive may declare in all (the sum of its manifest's file sizes): what a session
 * reaches is a few hundred MiB, and reading is bounded in time by this, not by what a hostile
 * manifest claims.
 */
export const MAX_IMPORT_BYTES = 16 * 1024 ** 3;
/**
 * Largest expansion accepted from a gzip archive, decompressed bytes per compressed byte. Session
 * JSONL compresses 3-15x (base64 images far less); a stream that expands more is a decompression
 * bomb (zeros compress about 1000x). Checked once `RATIO_FLOOR_BYTES` have come out, so a small
 * archive of repetitive text is not refused.
 */
export const MAX_GZIP_RATIO = 100;
const RATIO_FLOOR_BYTES = 16 * 1024 * 1024;

/** Counts the bytes a stream passes through. */
async function* counted(source: AsyncIterable<Buffer>, add: (n: number) => void): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    add(chunk.length);
    yield chunk;
  }
}

/** Options of `importSnapshot`. */
export interface ImportOptions extends Omit<SnapshotWriteOptions, 'name'> {
  /** The archive to read. */
  archive: string;
  /** Name of the new snapshot (default: the exported name). */
  name?: string;
  /** New project directory (absolute): `cwd` fields and the recorded project are remapped to it. */
  cwd?: string;
  /** Most bytes the archive may declare (default `MAX_IMPORT_BYTES`). */
  maxBytes?: number;
  /** Largest gzip expansion accepted (default `MAX_GZIP_RATIO`). */
  maxRatio?: number;
}

/** What `importSnapshot` did. */
export interface ImportResult extends SnapshotResult {
  archive: string;
  /** The name the snapshot had when it was exported. */
  exportedName: string;
  /** The project directory rewrite applied, if any. */
  remapped: { from: string; to: string; lines: number } | null;
}

/** Reads an export archive into a new snapshot, verifying everything before publishing it. */
export async function importSnapshot(options: ImportOptions): Promise<ImportResult> {
  const archive = options.archive;
  let head = Buffer.alloc(2);
  try {
    const handle = await open(archive, 'r');
    try {
      const { bytesRead } = await handle.read(head, 0, 2, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (cause) {
    throw ioError('read', archive, cause);
  }
  const raw = createReadStream(archive, { highWaterMark: 1 << 20 });
  const gunzip = head[0] === 0x1f && head[1] === 0x8b;
  const maxRatio = options.maxRatio ?? MAX_GZIP_RATIO;
  let compressed = 0;
  let expanded = 0;
  const checkRatio = (n: number) => {
    expanded += n;
    if (expanded > RATIO_FLOOR_BYTES && expanded > compressed * maxRatio) {
      throw archiveError(
        archive,
        `the gzip stream expands more than ${maxRatio}:1 (${expanded} bytes from ${compressed}): a decompression bomb, not a session export`,
        'a ctxvm export compresses far less than that; nothing was imported',
      );
    }
  };
  const stream: AsyncIterable<Buffer> = gunzip ? counted(raw.pipe(createGunzip({ chunkSize: 64 * 1024 })), checkRatio) : raw;
  if (gunzip) raw.on('data', (chunk) => (compressed += chunk.length));
  raw.on('error', () => {}); // surfaced through the iteration below
  const members = readTar(stream, archive)[Symbol.asyncIterator]();
  try {
    const first = await members.next();
    if (first.done) throw archiveError(archive, 'the archive is empty');
    const entry = first.value;
    if (entry.path !== EXPORT_MANIFEST_MEMBER) throw archiveError(archive, `the first member must be ${EXPORT_MANIFEST_MEMBER}, found ${JSON.stringify(entry.path)}`);
    if (entry.type !== 'file') {
      throw archiveError(archive, `${EXPORT_MANIFEST_MEMBER} is ${TYPE_WORDS[entry.type] ?? entry.type}${entry.linkTarget ? ` (to ${JSON.stringify(entry.linkTarget)})` : ''}, not a regular file`);
    }
    if (entry.size > MAX_EXPORT_MANIFEST_BYTES) throw archiveError(archive, `${EXPORT_MANIFEST_MEMBER} is ${entry.size} bytes, more than the ${MAX_EXPORT_MANIFEST_BYTES} allowed`);
    const parts: Buffer[] = [];
    for await (const piece of entry.body) parts.push(piece);
    const exported = parseExportManifest(Buffer.concat(parts), archive);
    const maxBytes = options.maxBytes ?? MAX_IMPORT_BYTES;
    const declared = exported.files.reduce((n, f) => n + f.bytes, 0);
    if (declared > maxBytes) throw archiveError(archive, `the manifest declares ${declared} bytes of session files, more than the ${maxBytes} an import accepts`);
    const from = exported.snapshot.project;
    const to = options.cwd;
    const remap = from !== null && to !== undefined && to !== from ? { from, to } : undefined;
    let remappedLines = 0;
    const byMember = new Map(exported.files.map((f) => [f.member, f]));

    const result = await writeSnapshot(
      { ...options, name: options.name ?? exported.snapshot.name, ...(options.description === undefined && exported.snapshot.description ? { description: exported.snapshot.description } : {}), tags: options.tags ?? exported.snapshot.tags },
      { agent: exported.snapshot.agent, sessionId: exported.snapshot.sessionId, project: remap ? remap.to : from, sourcePath: exported.snapshot.sourcePath, origin: 'import' },
      async (onStored) => {
        const captured = new Map<string, ManifestFile>();
        for (let next = await members.next(); !next.done; next = await members.next()) {
          const m = next.value;
          const unsafe = unsafeMemberReason(m.path);
          if (unsafe) throw archiveError(archive, `member ${JSON.stringify(m.path)} is ${unsafe}`);
          if (m.type !== 'file') throw archiveError(archive, `member ${JSON.stringify(m.path)} is ${TYPE_WORDS[m.type] ?? m.type}${m.linkTarget ? ` (to ${JSON.stringify(m.linkTarget)})` : ''}; only regular files are accepted`);
          const file = byMember.get(m.path);
          if (!file) throw archiveError(archive, `member ${JSON.stringify(m.path)} is not listed in ${EXPORT_MANIFEST_MEMBER}`);
          if (captured.has(m.path)) throw archiveError(archive, `member ${JSON.stringify(m.path)} appears twice`);
          if (m.size !== file.bytes) throw archiveError(archive, `member ${m.path} is ${m.size} bytes, the manifest says ${file.bytes}`);
          const hasher = createSha256();
          async function* hashed(): AsyncGenerator<Buffer> {
            for await (const piece of m.body) {
              hasher.update(piece);
              yield piece;
            }
          }
          const isJsonl = file.path.endsWith('.jsonl');
          const blocks = remap && isJsonl
            ? mapLines(hashed(), (line) => {
                const out = remapCwdInLine(line, remap.from, remap.to);
                if (out !== line) remappedLines++;
                return out;
              })
            : hashed();
          const manifestFile = await captureBytes({ store: options.store, role: file.role, relativePath: file.path, onStored, dropIncompleteTail: false }, { blocks, mtimeMs: file.mtimeMs });
          const digest = hasher.digestHex();
          if (digest !== file.sha256) {
            throw new IntegrityError(`${archive}: member ${m.path} does not match its checksum (sha256 ${digest}, manifest ${file.sha256}); nothing was imported`);
          }
          captured.set(m.path, manifestFile);
        }
        const missing = exported.files.filter((f) => !captured.has(f.member)).map((f) => f.member);
        if (missing.length) throw new IntegrityError(`${archive}: the archive lacks ${missing.join(', ')} (truncated?); nothing was imported`);
        return exported.files.map((f) => captured.get(f.member)!);
      },
    );
    return { ...result, archive, exportedName: exported.snapshot.name, remapped: remap ? { ...remap, lines: remappedLines } : null };
  } catch (error) {
    if ((error as { code?: string }).code === 'Z_DATA_ERROR' || (error as { code?: string }).code === 'Z_BUF_ERROR') {
      throw new IntegrityError(`${archive}: the gzip stream is corrupt (${(error as Error).message}); nothing was imported`, { cause: error });
    }
    throw error;
  } finally {
    await members.return?.(undefined).catch(() => {});
    raw.destroy();
  }
}
