/**
 * The export archive format shared by `ctxvm export` (export.ts) and `ctxvm import`
 * (import.ts): one tar archive (gzip-compressed when the name ends in `.gz` / `.tgz`) whose first
 * member, `ctxvm-export.json`, is a versioned manifest listing every other member with its size
 * and sha256; the session files follow under `files/`, whole and decoded, so the archive is
 * readable with plain `tar` and needs no ctxvm object store.
 */
import { isSha256Hex } from '../../core/hash.js';
import { CtxvmError, UsageError } from '../../errors.js';
import type { AgentKind } from '../context-model.js';
import { isSafeRelativePath, type SnapshotFileRole } from './manifest.js';

/** `format` of an export manifest. */
export const EXPORT_FORMAT = 'ctxvm.export';
/** Current export manifest version. */
export const EXPORT_VERSION = 1;
/** Name of the manifest member (always the first). */
export const EXPORT_MANIFEST_MEMBER = 'ctxvm-export.json';
/** Largest manifest member accepted, bytes. */
export const MAX_EXPORT_MANIFEST_BYTES = 4 << 20;
/** Folder of the session files inside the archive. */
export const FILES_PREFIX = 'files/';

/** One session file in an export. */
export interface ExportFileEntry {
  /** Member path inside the archive (`files/<path>`). */
  member: string;
  role: SnapshotFileRole;
  /** Path relative to the session folder. */
  path: string;
  bytes: number;
  sha256: string;
  /** Unix ms. */
  mtimeMs: number;
}

/** The `ctxvm-export.json` member. */
export interface ExportManifest {
  format: typeof EXPORT_FORMAT;
  version: number;
  /** Unix ms. */
  exportedAtMs: number;
  snapshot: {
    id: string;
    name: string;
    description: string | null;
    tags: string[];
    agent: AgentKind;
    sessionId: string;
    project: string | null;
    sourcePath: string;
    /** Unix ms. */
    createdAtMs: number;
  };
  /** Main session file first. */
  files: ExportFileEntry[];
}

/** A usage error about an archive: it was not written by `ctxvm export`, or was tampered with. */
export function archiveError(archive: string, message: string, hint?: string): UsageError {
  return new UsageError(`${archive}: ${message}`, { hint: hint ?? 'this archive was not written by `ctxvm export`, or was tampered with; nothing was imported' });
}

/** Checks an export manifest; `archive` labels errors. */
export function parseExportManifest(bytes: Buffer, archive: string): ExportManifest {
  let m: ExportManifest;
  try {
    m = JSON.parse(bytes.toString('utf8')) as ExportManifest;
  } catch (cause) {
    throw archiveError(archive, `${EXPORT_MANIFEST_MEMBER} is not JSON (${(cause as Error).message})`);
  }
  if (!m || typeof m !== 'object' || m.format !== EXPORT_FORMAT) throw archiveError(archive, `${EXPORT_MANIFEST_MEMBER} is not a ctxvm export manifest`);
  if (m.version !== EXPORT_VERSION) {
    throw new CtxvmError('E_UNSUPPORTED', `${archive}: export format version ${String(m.version)} is not supported (expected ${EXPORT_VERSION})`, { hint: 'upgrade ctxvm' });
  }
  const s = m.snapshot;
  if (!s || typeof s !== 'object' || typeof s.name !== 'string' || typeof s.sessionId !== 'string' || !s.sessionId || (s.agent !== 'claude' && s.agent !== 'codex')) {
    throw archiveError(archive, 'the manifest does not describe a snapshot');
  }
  if (s.project !== null && typeof s.project !== 'string') throw archiveError(archive, 'snapshot.project must be a string or null');
  if (!Array.isArray(m.files) || m.files.length === 0) throw archiveError(archive, 'the manifest lists no files');
  const members = new Set<string>();
  m.files.forEach((f, i) => {
    const at = `files[${i}]`;
    if (!f || typeof f !== 'object') throw archiveError(archive, `${at} is not an object`);
    if (f.role !== 'main' && f.role !== 'subagent' && f.role !== 'tool-result') throw archiveError(archive, `${at}.role is ${JSON.stringify(f.role)}`);
    if (!isSafeRelativePath(f.path)) throw archiveError(archive, `${at}.path ${JSON.stringify(f.path)} is not a safe relative path`);
    if (f.member !== FILES_PREFIX + f.path) throw archiveError(archive, `${at}.member must be ${JSON.stringify(FILES_PREFIX + f.path)}`);
    if (members.has(f.member)) throw archiveError(archive, `${f.member} is listed twice`);
    members.add(f.member);
    if (!Number.isSafeInteger(f.bytes) || f.bytes < 0) throw archiveError(archive, `${at}.bytes is not a size`);
    if (!isSha256Hex(f.sha256)) throw archiveError(archive, `${at}.sha256 is not a sha256 digest`);
    if (typeof f.mtimeMs !== 'number' || !Number.isFinite(f.mtimeMs)) f.mtimeMs = 0;
  });
  if (m.files[0]!.role !== 'main' || m.files.filter((f) => f.role === 'main').length !== 1) throw archiveError(archive, 'the manifest must list exactly one main session file, first');
  if (!Array.isArray(s.tags)) s.tags = [];
  return m;
}

