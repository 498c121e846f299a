/**
 * Fencing for the Redis hot cache: which Redis *server state* a connection talks to.
 *
 * Redis can come back with older data than it acknowledged: restarted from an RDB snapshot or an
 * AOF that misses the last writes, or failed over to a replica that lagged. Such a server holds
 * old entries together with the old version counters and generation tokens that vouch for them,
 * so no check kept inside Redis can tell them apart from current ones. What does change is the
 * server's identity: `run_id` is new on every start, and `master_replid` is new on every
 * promotion of a replica (a restart from disk or a failover thus always yields a new epoch).
 * The driver labels every value and version counter with the epoch it was written under and
 * ignores anything labelled with another: after a restart or failover the cache starts empty.
 *
 * An epoch is learnt once per connection (INFO server + INFO replication, two small replies) and
 * re-checked in the background every `recheckMs` (a server demoted and promoted again without
 * dropping its clients changes `master_replid` only). A reply is trusted only when the
 * connection it came from is the one the epoch was learnt on: `holds()` compares a serial
 * number that every connect, disconnect, error and epoch change raises.
 */
import { createHash } from 'node:crypto';

/** What the tracker needs of a node-redis client. */
export interface EpochSource {
  info(section: string): Promise<string>;
  on(event: 'connect' | 'end' | 'error', listener: (...args: unknown[]) => void): unknown;
}

/** The epoch a call runs under: `token` labels what it writes, `serial` names the connection. */
export interface Epoch {
  token: string;
  serial: number;
}

export interface EpochTracker {
  /** The current epoch, learnt from the server when not known for the current connection. */
  current(): Promise<Epoch>;
  /** True while `epoch` is still current: same connection, same server state. */
  holds(epoch: Epoch): boolean;
  /** Called when the server turns out to be another one (restart, failover) than before. */
  onChange(listener: (previous: string, next: string) => void): void;
  /** How many times the epoch changed since the tracker was created. */
  changes(): number;
}

/** A field of an INFO reply, or undefined. */
export function infoField(info: string, field: string): string | undefined {
  const match = new RegExp(`^${field}:(.*)$`, 'm').exec(info);
  return match?.[1]?.trim() || undefined;
}

/** The epoch token of a server: a short digest of its run id and replication id. */
export function epochToken(infoServer: string, infoReplication: string): string {
  const runId = infoField(infoServer, 'run_id');
  if (runId === undefined) throw new Error('INFO server has no run_id: cannot tell a restarted Redis from the one before');
  const replId = infoField(infoReplication, 'master_replid') ?? '';
  return createHash('sha256').update(`${runId}/${replId}`).digest('base64url').slice(0, 16);
}

/** Tracks the epoch of `client`'s connection. */
export function createEpochTracker(client: EpochSource, options: { recheckMs: number }): EpochTracker {
  let serial = 0;
  let known: { token: string; serial: number; learntAtMs: number } | undefined;
  let learning: { serial: number; read: Promise<Epoch> } | undefined;
  let lastToken: string | undefined;
  let changeCount = 0;
  const listeners: Array<(previous: string, next: string) => void> = [];

  const forget = () => {
    serial++;
    known = undefined;
    learning = undefined;
  };
  client.on('connect', forget);
  client.on('end', forget);
  client.on('error', forget);

  function learn(): Promise<Epoch> {
    const at = serial;
    const read = Promise.all([client.info('server'), client.info('replication')]).then(([server, replication]) => {
      const token = epochToken(server, replication);
      if (serial !== at) throw new Error('redis connection changed while its identity was read');
      if (lastToken !== undefined && token !== lastToken) {
        // Calls in flight under the old token must not be trusted: a new serial fails holds().
        serial++;
        changeCount++;
        const previous = lastToken;
        lastToken = token;
        known = { token, serial, learntAtMs: Date.now() };
        for (const listener of listeners) listener(previous, token);
      } else {
        lastToken = token;
        known = { token, serial, learntAtMs: Date.now() };
      }
      return { token, serial: known.serial };
    });
    const entry = { serial: at, read };
    learning = entry;
    const done = () => {
      if (learning === entry) learning = undefined;
    };
    read.then(done, done);
    return read;
  }

  return {
    current() {
      if (known && known.serial === serial) {
        // Re-checked in the background: the call goes on under the epoch known now, and fails
        // holds() if the re-check finds another server state before it is answered.
        if (Date.now() - known.learntAtMs >= options.recheckMs && !learning) learn().catch(() => {});
        return Promise.resolve({ token: known.token, serial: known.serial });
      }
      return learning && learning.serial === serial ? learning.read : learn();
    },
    holds: (epoch) => epoch.serial === serial && known?.token === epoch.token,
    onChange(listener) {
      listeners.push(listener);
    },
    changes: () => changeCount,
  };
}
