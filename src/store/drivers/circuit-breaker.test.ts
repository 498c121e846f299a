import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCircuitBreaker } from './circuit-breaker.js';

const stalled = new Error('stalled');
const answered = new Error('WRONGTYPE');

function breakerOver(backend: { up: boolean }) {
  const events: string[] = [];
  const breaker = createCircuitBreaker({
    what: 'backend',
    probeEveryMs: 20,
    probe: async () => {
      if (!backend.up) throw stalled;
    },
    trips: (error) => error === stalled,
    onOpen: () => events.push('open'),
    onClose: () => events.push('close'),
  });
  return { breaker, events };
}

describe('circuit breaker', () => {
  it('runs calls while closed, and an error that does not trip leaves it closed', async () => {
    const { breaker } = breakerOver({ up: true });
    await expect(breaker.run(async () => 7)).resolves.toBe(7);
    await expect(breaker.run(async () => Promise.reject(answered))).rejects.toBe(answered);
    expect(breaker.stats()).toMatchObject({ state: 'closed', trips: 0, shortCircuited: 0 });
    breaker.stop();
  });

  it('opens on a tripping failure, refuses calls at once without running them, and closes when a probe answers', async () => {
    const backend = { up: false };
    const { breaker, events } = breakerOver(backend);
    await expect(breaker.run(async () => Promise.reject(stalled))).rejects.toBe(stalled);
    expect(breaker.stats()).toMatchObject({ state: 'open', trips: 1 });
    let ran = 0;
    const refused = breaker.run(async () => ++ran);
    await expect(refused).rejects.toMatchObject({ code: 'E_UNAVAILABLE', message: expect.stringContaining('backend is skipped') });
    expect(ran).toBe(0);
    await sleep(70); // a few failed probes: still open
    expect(breaker.stats().state).not.toBe('closed');
    backend.up = true;
    for (let i = 0; i < 50 && breaker.stats().state !== 'closed'; i++) await sleep(10);
    expect(breaker.stats()).toMatchObject({ state: 'closed', trips: 1, shortCircuited: 1 });
    await expect(breaker.run(async () => 'ok')).resolves.toBe('ok');
    expect(events).toEqual(['open', 'close']);
    breaker.stop();
  });

  it('is switched by connection events: open() and close() directly, each counted once', () => {
    const { breaker, events } = breakerOver({ up: false });
    breaker.open(stalled);
    breaker.open(stalled);
    expect(breaker.stats()).toMatchObject({ state: 'open', trips: 1 });
    breaker.close();
    breaker.close();
    expect(breaker.stats().state).toBe('closed');
    expect(events).toEqual(['open', 'close']);
    breaker.stop();
  });

  it('stops probing once stopped', async () => {
    let probes = 0;
    const breaker = createCircuitBreaker({ what: 'backend', probeEveryMs: 5, probe: async () => void probes++, trips: () => true });
    breaker.stop();
    breaker.open(stalled);
    await sleep(30);
    expect(probes).toBe(0);
  });
});
