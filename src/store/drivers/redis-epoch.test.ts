import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createEpochTracker, epochToken, infoField } from './redis-epoch.js';

const info = (runId: string, replId: string) => ({ server: `# Server\r\nredis_version:7.0.15\r\nrun_id:${runId}\r\ntcp_port:6379\r\n`, replication: `# Replication\r\nrole:master\r\nmaster_replid:${replId}\r\nmaster_repl_offset:0\r\n` });

/** What the tracker reads: INFO replies of whichever server the connection reaches now. */
class Server extends EventEmitter {
  now = info('a'.repeat(40), '1'.repeat(40));
  reads = 0;
  async info(section: string): Promise<string> {
    this.reads++;
    return section === 'server' ? this.now.server : this.now.replication;
  }
}

describe('redis epoch', () => {
  it('reads run_id and master_replid out of INFO', () => {
    const { server, replication } = info('r'.repeat(40), 'p'.repeat(40));
    expect(infoField(server, 'run_id')).toBe('r'.repeat(40));
    expect(infoField(replication, 'master_replid')).toBe('p'.repeat(40));
    expect(infoField(server, 'nope')).toBeUndefined();
  });

  it('yields a new token for a new run id (restart) and for a new replication id (promotion), the same one otherwise', () => {
    const base = info('a'.repeat(40), '1'.repeat(40));
    const token = epochToken(base.server, base.replication);
    expect(epochToken(base.server, base.replication)).toBe(token);
    const restarted = info('b'.repeat(40), '1'.repeat(40));
    const promoted = info('a'.repeat(40), '2'.repeat(40));
    expect(epochToken(restarted.server, restarted.replication)).not.toBe(token);
    expect(epochToken(promoted.server, promoted.replication)).not.toBe(token);
    expect(() => epochToken('# Server\r\n', base.replication)).toThrow(/run_id/);
  });

  it('learns once per connection; a reconnect makes calls under the old epoch untrusted', async () => {
    const server = new Server();
    const tracker = createEpochTracker(server, { recheckMs: 60_000 });
    const first = await tracker.current();
    await tracker.current();
    expect(server.reads).toBe(2); // one INFO server + one INFO replication
    expect(tracker.holds(first)).toBe(true);
    server.emit('connect');
    expect(tracker.holds(first)).toBe(false);
    const second = await tracker.current();
    expect(second.token).toBe(first.token); // same server, reconnected
    expect(tracker.holds(second)).toBe(true);
    expect(tracker.changes()).toBe(0);
  });

  it('tells listeners when the server came back as another state, and counts it', async () => {
    const server = new Server();
    const tracker = createEpochTracker(server, { recheckMs: 60_000 });
    const heard: string[] = [];
    tracker.onChange((previous, next) => heard.push(`${previous}->${next}`));
    const before = await tracker.current();
    server.emit('end');
    server.now = info('c'.repeat(40), '1'.repeat(40));
    const after = await tracker.current();
    expect(after.token).not.toBe(before.token);
    expect(heard).toEqual([`${before.token}->${after.token}`]);
    expect(tracker.changes()).toBe(1);
  });

  it('re-checks a live connection in the background and fences calls begun before a change', async () => {
    const server = new Server();
    const tracker = createEpochTracker(server, { recheckMs: 0 });
    const before = await tracker.current();
    // Demoted and promoted again without dropping the connection: only master_replid changes.
    server.now = info('a'.repeat(40), '9'.repeat(40));
    const stillOld = await tracker.current(); // answers at once, re-checks behind it
    expect(stillOld.token).toBe(before.token);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tracker.holds(before)).toBe(false);
    expect((await tracker.current()).token).not.toBe(before.token);
    expect(tracker.changes()).toBe(1);
  });
});
