/**
 * Test helpers for reminders, exported for users' own tests: a real webhook receiver on
 * 127.0.0.1 (port 0) that records what it got and answers from a script, and a testbed that
 * opens the memory store, manager and ledger over one SQLite file with a fixed clock.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FixedClock } from '../../core/clock.js';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import { createMemoryManager, type MemoryManager } from '../manager.js';
import type { MemoryStore } from '../memory-store.js';
import { createSqlMemoryStore } from '../store/sql-memory-store.js';
import { createReminderLedger, type ReminderLedger } from './ledger.js';
import type { ReminderJson } from './reminder.js';

/** One POST the receiver got. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The raw body (for signature checks). */
  raw: string;
  body: ReminderJson;
}

/** A local webhook endpoint. */
export interface WebhookReceiver {
  /** "http://127.0.0.1:<port>/hooks/reminders". */
  readonly url: string;
  /** Every request, in order (including ones answered with an error status). */
  readonly received: ReceivedWebhook[];
  /** Statuses for the next requests, one each; when empty, 204. */
  enqueue(...statuses: number[]): void;
  /** Called for every request before it is answered. */
  onRequest?: (request: ReceivedWebhook) => void;
  close(): Promise<void>;
}

/** Starts a webhook receiver. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const queue: number[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    enqueue: (...statuses) => void queue.push(...statuses),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ReminderJson;
      try {
        body = JSON.parse(raw) as ReminderJson;
      } catch {
        body = undefined as never;
      }
      const got: ReceivedWebhook = { headers: req.headers, raw, body };
      receiver.received.push(got);
      receiver.onRequest?.(got);
      res.writeHead(queue.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/reminders`;
  return receiver;
}

/** The memory services a scheduler needs, over one SQLite file. */
export interface ReminderTestbed {
  db: SqlDatabase;
  store: MemoryStore;
  manager: MemoryManager;
  ledger: ReminderLedger;
  /** Closes the database (as a process exit would). */
  close(): Promise<void>;
}

/** Opens (creating and migrating) `<dir>/ctxvm.db` with the clock `clock`; a second call on the same dir is a "restart". */
export async function openReminderTestbed(dir: string, clock: FixedClock): Promise<ReminderTestbed> {
  const db = await openWarmDatabase({ db: join(dir, 'ctxvm.db'), now: clock.now });
  // a whitespace analyzer keeps these tests independent of the segmenter's dictionary load
  const store = createSqlMemoryStore(db, { now: clock.now, analyzer: (text) => text.toLowerCase().split(/\s+/).filter(Boolean) });
  const manager = createMemoryManager({ store, clock, defaultTimeZone: 'UTC' });
  return { db, store, manager, ledger: createReminderLedger(db), close: () => db.close() };
}
