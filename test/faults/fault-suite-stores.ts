/**
 * Storage scenarios of the fault suite (./fault-suite.test.ts): memory writers killed with SIGKILL
 * at random moments (SQLite and PostgreSQL, through the Redis hot tier when there is one), object
 * files with a flipped byte, and hostile export archives. Each adds one row to the table.
 */
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { createCachedMemoryStore } from '../../src/memory/cached-memory-store.js';
import { createSqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { EXPORT_MANIFEST_MEMBER } from '../../src/session/dag/archive-format.js';
import { importSnapshot } from '../../src/session/dag/import.js';
import { TAR_BLOCK, TAR_END, tarFileHeader, tarPadding } from '../../src/session/dag/tar.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import type { DagEnv } from '../support/dag-env.js';
import type { FaultTable } from './fault-table.js';

/** Where a memory writer writes: a SQLite file, or a PostgreSQL URL and schema. */
export interface WarmTarget {
  name: string;
  db: string;
  searchPath?: string;
}

interface KilledRun {
  label: string;
  acked: number;
}

/** Starts the bundled writer, kills it `afterMs` after it is ready, returns what it acknowledged. */
function runAndKill(writer: string, args: object, label: string, afterMs: number): Promise<KilledRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, JSON.stringify({ ...args, label })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!timer && out.includes('ready\n')) timer = setTimeout(() => child.kill('SIGKILL'), afterMs);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`writer ${label} ended by itself (code ${code}): ${err}`));
      const acks = out.split('\n').filter((l) => l.startsWith('ack ')).length;
      resolve({ label, acked: acks });
    });
  });
}

/** Kills `rounds` writers at random moments, then checks the store: every acknowledged step whole, none by halves. */
export async function writersKilled(table: FaultTable, writer: string, target: WarmTarget, redisUrl: string | undefined, rounds: number, random: () => number): Promise<void> {
  const user = `killed-${randomUUID().slice(0, 8)}`;
  const runs: KilledRun[] = [];
  const base = { db: target.db, userId: user, ...(target.searchPath ? { searchPath: target.searchPath } : {}), ...(redisUrl ? { redis: redisUrl } : {}) };
  // Three at a time (they also contend for the database); each killed 0-400 ms after its first write.
  for (let r = 0; r < rounds; r += 3) {
    const batch = Array.from({ length: Math.min(3, rounds - r) }, (_, i) => runAndKill(writer, base, `r${r + i}`, Math.floor(random() * 400)));
    runs.push(...(await Promise.all(batch)));
  }

  const db = await openWarmDatabase({ db: target.db, ...(target.searchPath ? { postgres: { searchPath: target.searchPath, poolSize: 2 } } : {}) });
  const hot = redisUrl ? await createRedisHotCache({ url: redisUrl, keyPrefix: 'faults' }) : createLruHotCache();
  try {
    const warm = createSqlMemoryStore(db).forUser(user);
    const cached = createCachedMemoryStore({ store: createSqlMemoryStore(db), hot }).forUser(user);
    const tasks = await warm.listTasks();
    const titles = new Set(tasks.map((t) => t.title));
    let lost = 0;
    let halves = 0;
    let acked = 0;
    for (const run of runs) {
      acked += run.acked;
      for (let i = 0; i < run.acked; i++) if (!titles.has(`${run.label} step ${i}`)) lost++;
    }
    // By halves: a turn without its task or a task without its turn (one transaction each).
    const turnIds = tasks.map((t) => t.title.replace(/ step (\d+)$/, '-turn-$1'));
    const turns = await warm.getTurns(turnIds);
    halves += turnIds.length - turns.length;
    halves += Math.max(0, (await warm.countTurns()) - tasks.length);
    let integrity = 'ok';
    if (!target.db.startsWith('postgres')) {
      const { default: Database } = await import('better-sqlite3');
      const raw = new Database(target.db, { readonly: true });
      integrity = String(raw.pragma('integrity_check', { simple: true }));
      raw.close();
    }
    const staleCache = JSON.stringify((await cached.listTasks()).map((t) => t.id).sort()) !== JSON.stringify(tasks.map((t) => t.id).sort());
    const held = lost === 0 && halves === 0 && integrity === 'ok' && !staleCache;
    table.add({
      area: `warm store (${target.name})`,
      fault: `kill -9 memory writers (3 at once) at random moments${redisUrl ? ' (redis hot tier)' : ''}`,
      tried: rounds,
      held: held ? rounds : 0,
      lost: `${lost} of ${acked} acknowledged writes; ${halves} half-written; integrity ${integrity}${staleCache ? '; cache stale' : ''}`,
    });
    expect({ lost, halves, integrity, staleCache }).toEqual({ lost: 0, halves: 0, integrity: 'ok', staleCache: false });
    expect(acked).toBeGreaterThan(0);
  } finally {
    await hot.close();
    await db.close();
  }
}

async function findFile(root: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === name) return join(entry.parentPath, entry.name);
  }
  return undefined;
}

/** Flips one random byte of `count` object files; a read must refuse each one, never return other bytes. */
export async function objectsCorrupted(table: FaultTable, root: string, count: number, random: () => number): Promise<void> {
  const store = createFsObjectStore({ root });
  let caught = 0;
  let served = 0;
  // Offsets whose flip left the content intact (the read verified it): only the header's two
  // reserved bytes (6-7, see objects-fs-format.ts) may be such, which readers do not check.
  const intact: number[] = [];
  const other: string[] = [];
  for (let i = 0; i < count; i++) {
    // Compressible and incompressible contents, small and large.
    const content = i % 2 === 0 ? Buffer.from(`line ${i} of a session\n`.repeat(50 + Math.floor(random() * 2000))) : createHash('sha512').update(String(i)).digest();
    const { hash } = await store.put(content);
    const file = (await findFile(root, hash))!;
    const bytes = await readFile(file);
    const at = Math.floor(random() * bytes.length);
    bytes[at] = bytes[at]! ^ (1 + Math.floor(random() * 255));
    await writeFile(file, bytes);
    try {
      const back = await store.get(hash);
      if (!back.equals(content)) served++;
      else intact.push(at);
    } catch (error) {
      if ((error as { code?: string }).code === 'E_INTEGRITY') caught++;
      else other.push(`byte ${at} of ${bytes.length}: ${String(error)}`);
    }
  }
  table.add({
    area: 'cold store (objects)',
    fault: 'one byte flipped in an object file',
    tried: count,
    held: caught + intact.length,
    lost: `${served} corrupt objects served; ${caught} flips caught (E_INTEGRITY)${intact.length ? `, ${intact.length} in the reserved header bytes not noticed (content intact)` : ''}${other.length ? `; other errors: ${other.join('; ')}` : ''}`,
  });
  expect({ served, other, undetectedOutsideReserved: intact.filter((at) => at !== 6 && at !== 7) }).toEqual({ served: 0, other: [], undetectedOutsideReserved: [] });
  expect(caught + intact.length).toBe(count);
}

/** A raw tar header with any type flag and name (what a hostile archive can contain). */
function rawHeader(name: string, size: number, type: string, link = ''): Buffer {
  const h = tarFileHeader('placeholder', size, 0);
  h.fill(0, 0, 100);
  h.write(name, 0, 'utf8');
  h.write(type, 156, 'latin1');
  h.write(link, 157, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  return h;
}

function member(name: string, content: Buffer, type = '0'): Buffer {
  const file = type === '0';
  return Buffer.concat([rawHeader(name, file ? content.length : 0, type, file ? '' : content.toString()), file ? Buffer.concat([content, tarPadding(content.length)]) : Buffer.alloc(0)]);
}

/** Hostile export archives: each must be refused, leaving no snapshot and nothing outside the store. */
export async function archivesHostile(table: FaultTable, env: DagEnv): Promise<void> {
  const session = randomUUID();
  const content = Buffer.from(`${JSON.stringify({ type: 'user', sessionId: session, uuid: randomUUID(), cwd: '/p', message: { role: 'user', content: 'hi' } })}\n`);
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const manifest = (files: Array<{ path: string; content: Buffer }>) =>
    member(
      EXPORT_MANIFEST_MEMBER,
      Buffer.from(
        JSON.stringify({
          format: 'ctxvm.export',
          version: 1,
          exportedAtMs: 0,
          snapshot: { id: 'x', name: 'evil', description: null, tags: [], agent: 'claude', sessionId: session, project: '/p', sourcePath: '/x', createdAtMs: 0 },
          files: files.map((f, i) => ({ member: `files/${f.path}`, role: i === 0 ? 'main' : 'subagent', path: f.path, bytes: f.content.length, sha256: sha(f.content), mtimeMs: 0 })),
        }),
      ),
    );
  const good = () => manifest([{ path: `${session}.jsonl`, content }]);
  const tampered = Buffer.from(content);
  tampered[5] = 0x41;
  const whole = Buffer.concat([good(), member(`files/${session}.jsonl`, content), TAR_END]);
  const badGzip = gzipSync(whole);
  badGzip[badGzip.length - 20] = badGzip[badGzip.length - 20]! ^ 0xff;
  const cases: Array<[string, Buffer]> = [
    ['path traversal', Buffer.concat([good(), member(`files/../../${session}.jsonl`, content), TAR_END])],
    ['absolute path', Buffer.concat([good(), member(`/tmp/${session}.jsonl`, content), TAR_END])],
    ['symlink member', Buffer.concat([good(), member(`files/${session}.jsonl`, Buffer.from('/etc/passwd'), '2'), TAR_END])],
    ['hard link member', Buffer.concat([good(), member(`files/${session}.jsonl`, Buffer.from('files/x'), '1'), TAR_END])],
    ['character device', Buffer.concat([good(), member(`files/${session}.jsonl`, Buffer.alloc(0), '3'), TAR_END])],
    ['fifo', Buffer.concat([good(), member(`files/${session}.jsonl`, Buffer.alloc(0), '6'), TAR_END])],
    ['member not in the manifest', Buffer.concat([good(), member(`files/${session}.jsonl`, content), member('files/extra.jsonl', content), TAR_END])],
    ['manifest path with ..', Buffer.concat([manifest([{ path: `../${session}.jsonl`, content }]), TAR_END])],
    ['member larger than listed', Buffer.concat([good(), member(`files/${session}.jsonl`, Buffer.concat([content, Buffer.from('{}\n')])), TAR_END])],
    ['no manifest first', Buffer.concat([member(`files/${session}.jsonl`, content), TAR_END])],
    ['checksum mismatch', Buffer.concat([good(), member(`files/${session}.jsonl`, tampered), TAR_END])],
    ['missing member', Buffer.concat([manifest([{ path: `${session}.jsonl`, content }, { path: 'agent-1.jsonl', content }]), member(`files/${session}.jsonl`, content), TAR_END])],
    ['truncated archive', whole.subarray(0, TAR_BLOCK * 3 + 100)],
    ['corrupt gzip', badGzip],
    ['not a tar at all', Buffer.alloc(2048, 0x41)],
    ['manifest not JSON', Buffer.concat([member(EXPORT_MANIFEST_MEMBER, Buffer.from('{"format": "ctxvm.export", ')), TAR_END])],
  ];
  let refused = 0;
  const accepted: string[] = [];
  for (const [what, bytes] of cases) {
    const archive = join(env.root, `hostile-${refused + accepted.length}.tar`);
    await writeFile(archive, bytes);
    const outcome = await importSnapshot({ catalog: env.catalog, store: env.store, archive }).then(
      () => 'imported',
      (error: unknown) => ((error as { code?: string }).code === 'E_USAGE' || (error as { code?: string }).code === 'E_INTEGRITY' ? 'refused' : `failed: ${String(error)}`),
    );
    if (outcome === 'refused') refused++;
    else accepted.push(`${what}: ${outcome}`);
  }
  const published = (await env.catalog.listSnapshots()).length + (await env.catalog.listPendingSnapshots()).length;
  const outside = [join(env.root, '..', `${session}.jsonl`), join('/tmp', `${session}.jsonl`)].filter((p) => existsSync(p));
  table.add({
    area: 'import (archives)',
    fault: 'hostile export archive',
    tried: cases.length,
    held: published === 0 && outside.length === 0 ? refused : 0,
    lost: `${published} snapshots published; ${outside.length} files written outside${accepted.length ? `; not refused: ${accepted.join(', ')}` : ''}`,
  });
  expect({ accepted, published, outside }).toEqual({ accepted: [], published: 0, outside: [] });
}
