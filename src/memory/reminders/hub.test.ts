import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, type FixedClock } from '../../core/clock.js';
import { createReminderHub, formatSseEvent } from './hub.js';
import type { Reminder, ReminderJson } from './reminder.js';
import { createReminderScheduler } from './scheduler.js';
import { openReminderTestbed, type ReminderTestbed } from './testing.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);

const reminder = (userId: string, id = 't1@1'): Reminder => ({
  id,
  userId,
  task: { id: 't1', title: 'x', status: 'todo', priority: 'normal', dueAtMs: 1, duePhrase: null, projectId: null },
  dueAtMs: 1,
  text: 'Reminder: "x"\nsecond line',
  overdue: true,
  attempt: 1,
  sentAtMs: 2,
});

describe('reminder hub (SSE pub/sub)', () => {
  it('delivers to the listeners of the user and to listeners of every user', async () => {
    const hub = createReminderHub();
    const alice: ReminderJson[] = [];
    const all: ReminderJson[] = [];
    const stopAlice = hub.subscribe('alice', (r) => void alice.push(r));
    hub.subscribe(null, (r) => void all.push(r));
    await hub.deliver(reminder('alice'));
    await hub.deliver(reminder('bob', 't2@1'));
    expect(alice.map((r) => r.id)).toEqual(['t1@1']);
    expect(all.map((r) => r.id)).toEqual(['t1@1', 't2@1']);
    expect(hub.listenerCount('alice')).toBe(2);
    expect(hub.listenerCount()).toBe(2);
    stopAlice();
    stopAlice();
    expect(hub.listenerCount('alice')).toBe(1);
  });

  it('refuses a reminder nobody listens to, and survives a broken listener', async () => {
    const hub = createReminderHub();
    await expect(hub.deliver(reminder('carol'))).rejects.toMatchObject({ code: 'E_UNAVAILABLE' });
    const got: string[] = [];
    hub.subscribe('carol', () => {
      throw new Error('stream closed');
    });
    await expect(hub.deliver(reminder('carol'))).rejects.toThrow(/every listener/);
    hub.subscribe('carol', (r) => void got.push(r.id));
    await hub.deliver(reminder('carol'));
    expect(got).toEqual(['t1@1']);
  });

  it('formats a reminder as one server-sent event', () => {
    const json = { ...reminder('alice'), type: 'reminder' } as unknown as ReminderJson;
    const event = formatSseEvent(json);
    expect(event.startsWith('id: t1@1\nevent: reminder\ndata: {')).toBe(true);
    expect(event.endsWith('}\n\n')).toBe(true);
    expect(event.split('\n')).toHaveLength(5); // id, event, data, blank, ''
    expect(JSON.parse(event.split('\n')[2]!.slice('data: '.length))).toEqual(json);
  });
});

describe('the hub as the scheduler sink', () => {
  let dir: string;
  let clock: FixedClock;
  let bed: ReminderTestbed;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-reminders-'));
    clock = createFixedClock(T0);
    bed = await openReminderTestbed(dir, clock);
  });
  afterEach(async () => {
    await bed.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a reminder pending until a client subscribes', async () => {
    const hub = createReminderHub();
    await bed.store.forUser('alice').createTask({ title: 'stand-up', dueAtMs: T0 + 5 * MIN });
    const scheduler = createReminderScheduler({ store: bed.store, manager: bed.manager, ledger: bed.ledger, sink: hub, clock, retryBaseMs: MIN });
    expect((await scheduler.tick()).outcomes[0]).toMatchObject({ status: 'retrying', error: expect.stringContaining('nobody is listening') });
    const events: string[] = [];
    hub.subscribe('alice', (r) => void events.push(formatSseEvent(r)));
    clock.advance(MIN);
    expect((await scheduler.tick()).outcomes[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(events).toHaveLength(1);
    // composed again for the second attempt, so the text says how long is really left
    expect(events[0]).toContain('"text":"Reminder: \\"stand-up\\" is due today 09:05 (in 4 min)."');
  });
});
