// `node bench/process-message-cpu.bench.mjs`: CPU per processMessage, in-process, wired as
// `ctxvm serve` wires it (SQLite warm store, in-process hot cache, cold archive behind its batching
// queue), over 200 users with bench/http.bench.mjs's message mix. No HTTP: what is left of a
// request's cost once the network is taken away. Prints CPU ms per message (serial, then with
// `BENCH_PM_CONCURRENCY` messages in flight), the manager's stage means (serial: wall ≈ CPU on an
// idle machine), and the SQL statements and transactions per message. CPU per message is the
// measure to compare on a busy shared machine; wall numbers there are not. The serial pass also
// times SQLite itself (statements, and each transaction's BEGIN…COMMIT around its body) and prints
// what is left without it: the most messages a second two cores could process were storage free
// (and with no HTTP and no load generator on them) — the ceiling the JavaScript alone sets.
//
//   BENCH_PM_MESSAGES      messages per measured pass (default 2000; 600 warm up first)
//   BENCH_PM_CONCURRENCY   messages in flight in the concurrent pass (default 32)
//   BENCH_PM_GROWTH        further serial passes, each printed with the users' messages so far
//                          (default 0): a message costs more as its user's history grows (the
//                          history layer ranks more turns), up to the rebuild's search limit
//
// Needs dist/ (`npm run build`).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireDist, root, table } from './lib.mjs';
import { createMessageMix } from './message-mix.mjs';
import { createServeWiring } from './serve-wiring.mjs';

requireDist();
const MESSAGES = Number(process.env.BENCH_PM_MESSAGES ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_PM_CONCURRENCY ?? 32);
const USERS = 200;
const WARM_UP = 600;
/** CPU ms two cores give in a second. */
const TWO_CORES_MS = 2 * 1000;
const dist = (p) => import(join(root, 'dist', p));
const { openWarmDatabase } = await dist('store/warm/open.js');
const { SERVER_WAL_AUTOCHECKPOINT_PAGES } = await dist('server/open-services.js');

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-pm-'));
const raw = await openWarmDatabase({ db: join(dir, 'ctxvm.db'), walAutocheckpointPages: SERVER_WAL_AUTOCHECKPOINT_PAGES });
// count statements: outside transactions, inside them, and the transactions themselves
// and time them: better-sqlite3 runs a statement synchronously, inside the call
const counts = { reads: 0, writes: 0, txReads: 0, txWrites: 0, transactions: 0, sqlMs: 0 };
const timed = (count, call) => {
  counts[count]++;
  const t0 = performance.now();
  try {
    return call();
  } finally {
    counts.sqlMs += performance.now() - t0;
  }
};
const counted = (ex, inTx) => ({
  all: (s, p) => timed(inTx ? 'txReads' : 'reads', () => ex.all(s, p)),
  get: (s, p) => timed(inTx ? 'txReads' : 'reads', () => ex.get(s, p)),
  run: (s, p) => timed(inTx ? 'txWrites' : 'writes', () => ex.run(s, p)),
  exec: (s) => ex.exec(s),
});
/**
 * A transaction's own cost — BEGIN, SAVEPOINT, RELEASE, COMMIT (with any checkpoint) — is its
 * time to settle less its body's. With one message in flight nothing else runs meanwhile, except
 * the archive queue's own transactions (storage too); with more in flight it counts waits.
 */
const transaction = async (fn) => {
  counts.transactions++;
  const t0 = performance.now();
  let body = 0;
  try {
    return await raw.transaction(async (tx) => {
      const b0 = performance.now();
      try {
        return await fn(counted(tx, true));
      } finally {
        body += performance.now() - b0;
      }
    });
  } finally {
    counts.sqlMs += performance.now() - t0 - body;
  }
};
const db = { ...counted(raw, false), dialect: raw.dialect, location: raw.location, close: () => raw.close(), transaction };
const { manager, queue, close } = await createServeWiring(db, dir);

const nextMessage = createMessageMix();
const stages = { extract: 0, update: 0, rebuild: 0, respond: 0, total: 0 };
async function one() {
  const r = await manager.processMessage({ userId: `bench-user-${Math.floor(Math.random() * USERS)}`, text: nextMessage() });
  for (const k in stages) stages[k] += r.metrics.latencyMs[k];
}
/** One pass: its table row, and its CPU and SQLite ms a message. */
async function pass(inFlight) {
  for (const k in stages) stages[k] = 0;
  for (const k in counts) counts[k] = 0;
  let started = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (started < MESSAGES) {
      started++;
      await one();
    }
  }));
  await queue.flush(); // the archive's share of the work belongs to these messages
  const cpu = process.cpuUsage(cpu0);
  const per = (x) => (x / MESSAGES).toFixed(2);
  const cpuMs = (cpu.user + cpu.system) / 1000 / MESSAGES;
  const row = {
    'in flight': inFlight,
    'CPU ms/msg': cpuMs.toFixed(2),
    'msg/s': (MESSAGES / ((performance.now() - t0) / 1000)).toFixed(0),
    ...Object.fromEntries(Object.entries(stages).map(([k, v]) => [`${k} ms`, per(v)])),
    'reads/msg': per(counts.reads),
    'writes/msg': per(counts.writes),
    'tx/msg': per(counts.transactions),
    'in-tx statements/msg': per(counts.txReads + counts.txWrites),
  };
  return { row, cpuMs, sqlMs: counts.sqlMs / MESSAGES };
}

const load0 = loadavg()[0];
for (let i = 0; i < WARM_UP; i++) await one(); // warm-up: JIT, full-text index, users' first turns
const serial = await pass(1);
const rows = [serial.row, (await pass(CONCURRENCY)).row];
console.log(`\nbench:process-message-cpu — processMessage in-process, ${USERS} users, ${MESSAGES} messages a pass (load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)})\n`);
table(rows);
console.log('\nstage columns are wall-time means from the manager (concurrent pass: including waits)');
const withoutSql = serial.cpuMs - serial.sqlMs;
console.log(
  `serial pass: SQLite ${serial.sqlMs.toFixed(2)} ms of ${serial.cpuMs.toFixed(2)} CPU ms a message (${((serial.sqlMs / serial.cpuMs) * 100).toFixed(0)}%); ` +
    `without it ${withoutSql.toFixed(2)} ms: at most ${Math.floor(TWO_CORES_MS / withoutSql)} messages/s on 2 cores were storage free (no HTTP, no load generator)`,
);
const GROWTH = Number(process.env.BENCH_PM_GROWTH ?? 0);
if (GROWTH > 0) {
  const growth = [];
  let sent = WARM_UP + 2 * MESSAGES;
  for (let i = 0; i < GROWTH; i++) {
    const { row, sqlMs } = await pass(1);
    sent += MESSAGES;
    growth.push({ 'messages a user (mean)': (sent / USERS).toFixed(0), 'CPU ms/msg': row['CPU ms/msg'], 'SQLite ms/msg': sqlMs.toFixed(2), 'rebuild ms': row['rebuild ms'] });
  }
  console.log('\nas histories grow (serial passes):\n');
  table(growth);
}
await close();
await raw.close();
rmSync(dir, { recursive: true, force: true });
