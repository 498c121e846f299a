/** `ctxvm reminders run|list` in-process, against a temp CTXVM_HOME and a real local webhook. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../../test/support/run-cli.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../memory/reminders/testing.js';
import { openMemoryStore } from '../../memory/store/sql-memory-store.js';

const NOW = '2026-03-10T09:00:00.000Z';
const T0 = Date.parse(NOW);

describe('ctxvm reminders', () => {
  let home: string;
  let env: Record<string, string>;
  let hook: WebhookReceiver;
  const ctxvm = (...args: string[]) => runCliInProcess(args, env, home);

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), 'ctxvm-cli-reminders-'));
    env = { CTXVM_HOME: home, HOME: home };
    hook = await startWebhookReceiver();
    const store = await openMemoryStore({ db: join(home, 'ctxvm.db') });
    await store.forUser('alice').createTask({ title: 'send the invoice', dueAtMs: T0 + 10 * 60_000 });
    await store.forUser('bob').createTask({ title: 'book flights', dueAtMs: T0 + 5 * 60 * 60_000 });
    await store.close();
  });
  afterEach(async () => {
    await hook.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('run --once --json delivers due reminders to a webhook, once', async () => {
    const r = await ctxvm('reminders', 'run', '--once', '--json', '--now', NOW, '--webhook', hook.url);
    expect(r.code, r.stderr).toBe(0);
    const report = r.json<{ delivered: number; scanned: number; outcomes: { userId: string; status: string; text: string; due: string }[] }>();
    expect(report).toMatchObject({ scanned: 1, delivered: 1 });
    expect(report.outcomes[0]).toMatchObject({ userId: 'alice', status: 'delivered', due: '2026-03-10T09:10:00.000Z' });
    expect(hook.received.map((h) => h.body.text)).toEqual(['Reminder: "send the invoice" is due today 09:10 (in 10 min).']);

    const again = await ctxvm('reminders', 'run', '--once', '--json', '--now', NOW, '--webhook', hook.url);
    expect(again.json<{ delivered: number }>().delivered).toBe(0);
    expect(hook.received).toHaveLength(1);

    const list = await ctxvm('reminders', 'list', '--json');
    expect(list.json<{ userId: string; status: string }[]>()).toEqual([expect.objectContaining({ userId: 'alice', status: 'delivered', attempts: 1 })]);
  });

  it('prints reminders without a webhook, and exits 1 when a webhook refuses', async () => {
    const printed = await ctxvm('reminders', 'run', '--once', '--now', '2026-03-10T13:50:00Z', '--lead', '30');
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('[bob] Reminder: "book flights" is due today 14:00 (in 10 min).');
    expect(printed.stdout).toContain('[alice] Reminder: "send the invoice" was due today 09:10 (overdue by 4 h 40 min).');

    const store = await openMemoryStore({ db: join(home, 'ctxvm.db') });
    await store.forUser('carol').createTask({ title: 'x', dueAtMs: T0 });
    await store.close();
    hook.enqueue(410);
    const refused = await ctxvm('reminders', 'run', '--once', '--now', NOW, '--webhook', hook.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not delivered carol "x".*HTTP 410/);
  });

  it('rejects bad usage with exit 2', async () => {
    expect((await ctxvm('reminders', 'run', '--now', NOW)).code).toBe(2);
    expect((await ctxvm('reminders', 'run', '--once', '--webhook', 'ftp://example.com')).code).toBe(2);
    expect((await ctxvm('reminders', 'list', '--status', 'lost')).code).toBe(2);
  });
});
