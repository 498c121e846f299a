// `node bench/write-amplification.bench.mjs`: what one processMessage writes to SQLite, page by
// page. Wired as `ctxvm serve` wires it (SQLite warm store, in-process hot cache, cold archive
// behind its batching queue), 200 users, bench/http.bench.mjs's message mix, one message at a
// time. After a warm-up it empties the WAL, processes the measured messages with automatic
// checkpoints off, then reads the WAL's frame headers: every frame is one 4 KiB page written by
// a COMMIT, and `dbstat` says which table or index owns the page. Prints WAL pages per message
// by owner and the COMMITs per message. Unlike CPU time, these counts do not depend on how busy
// the machine is: a change to the write path can be compared exactly.
//
//   BENCH_WA_MESSAGES   measured messages (default 1000; 2000 warm up first)
//
// Needs dist/ (`npm run build`).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireDist, root, table } from './lib.mjs';
import { createMessageMix } from './message-mix.mjs';
import { createServeWiring } from './serve-wiring.mjs';

requireDist();
const MESSAGES = Number(process.env.BENCH_WA_MESSAGES ?? 1000);
const WARM_UP = 2000;
const USERS = 200;
const dist = (p) => import(join(root, 'dist', p));
const { openWarmDatabase } = await dist('store/warm/open.js');

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-wa-'));
const dbFile = join(dir, 'ctxvm.db');
// 0: no automatic checkpoint, so every page the measured messages write stays in the WAL
const raw = await openWarmDatabase({ db: dbFile, walAutocheckpointPages: 0 });
let transactions = 0;
const db = { all: raw.all, get: raw.get, run: raw.run, exec: raw.exec, dialect: raw.dialect, location: raw.location, close: () => raw.close(), transaction: (fn) => (transactions++, raw.transaction(fn)) };
const { manager, queue, close } = await createServeWiring(db, dir);
const nextMessage = createMessageMix();
const one = (i) => manager.processMessage({ userId: `bench-user-${i % USERS}`, text: nextMessage() });

for (let i = 0; i < WARM_UP; i++) await one(i);
await queue.flush();
await raw.exec('PRAGMA wal_checkpoint(TRUNCATE)');
transactions = 0;
for (let i = 0; i < MESSAGES; i++) await one(i);
await queue.flush(); // the archive's pages belong to these messages too

// WAL layout: a 32-byte header, then frames of a 24-byte header (page number first) and one page.
const wal = readFileSync(`${dbFile}-wal`);
const pageSize = wal.readUInt32BE(8);
const owners = new Map((await raw.all('SELECT pageno, name FROM dbstat')).map((r) => [r.pageno, r.name]));
const byOwner = new Map();
let frames = 0;
for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
  const owner = owners.get(wal.readUInt32BE(at)) ?? '(freed or new)';
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
  frames++;
}
const per = (n) => (n / MESSAGES).toFixed(2);
console.log(`\nbench:write-amplification — ${MESSAGES} processMessage calls after ${WARM_UP} (SQLite, ${USERS} users, page ${pageSize} B, WAL ${(statSync(`${dbFile}-wal`).size / 1024 / 1024).toFixed(1)} MiB)\n`);
console.log(`WAL pages per message: ${per(frames)} (${((frames * pageSize) / MESSAGES / 1024).toFixed(0)} KiB); transactions per message: ${per(transactions)}\n`);
const fullText = [...byOwner].filter(([name]) => name.startsWith('memory_search')).reduce((sum, [, n]) => sum + n, 0);
table([...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([owner, n]) => ({ 'table or index': owner, 'pages/message': per(n), share: `${((100 * n) / frames).toFixed(1)}%` })));
console.log(`\nfull-text index (memory_search*): ${per(fullText)} pages per message, ${((100 * fullText) / frames).toFixed(0)}% of the writes`);
await close();
await raw.close();
rmSync(dir, { recursive: true, force: true });
