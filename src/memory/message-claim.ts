/**
 * Who is answering a message id right now, across every process on one warm store (`ctxvm serve
 * --workers N`, or several servers): a request with an id claims it in the warm store before it
 * reads the message and releases it once it answered or failed. A duplicate arriving meanwhile —
 * on this worker or another — finds the claim and is refused with `E_CONFLICT` (409, response
 * null) instead of being taken for a retry of a failed first and answered twice. A claim whose
 * process is gone (same host, pid dead) or that is older than `MESSAGE_CLAIM_MAX_AGE_MS` (another
 * host, or a pid reused) is taken over, so a crash never blocks the id for good; the message it
 * stored, if any, is then answered as a retry (`resumed`).
 */
import { hostname } from 'node:os';
import { idRandomBytes } from '../core/id-random.js';
import { processAlive } from '../core/process-alive.js';

/** A claim as the warm store holds it. */
export interface MessageClaim {
  /** `<host>~<pid>~<random>` of the manager answering it. */
  owner: string;
  /** When it was claimed, Unix ms. */
  claimedAtMs: number;
}

/**
 * A claim older than this is taken over whatever its owner, ms (10 minutes): longer than any
 * answer takes (the LLM adapters give up after their timeout and retries, a few minutes at most).
 */
export const MESSAGE_CLAIM_MAX_AGE_MS = 10 * 60_000;

/** The owner name of one manager: host, pid and a random part (managers in one process differ). */
export function messageClaimOwner(host = hostname(), pid = process.pid): string {
  return `${host}~${pid}~${idRandomBytes(6).toString('hex')}`;
}

/** Options of `claimAbandoned`. */
export interface ClaimAbandonedOptions {
  nowMs: number;
  /** This host's name (default `os.hostname()`). */
  host?: string;
  /** Liveness of a pid on this host (default `processAlive`). */
  isAlive?: (pid: number) => boolean;
  /** Default `MESSAGE_CLAIM_MAX_AGE_MS`. */
  maxAgeMs?: number;
}

/** True when `claim` may be taken over: its process on this host is gone, or it is too old. */
export function claimAbandoned(claim: MessageClaim, options: ClaimAbandonedOptions): boolean {
  if (options.nowMs - claim.claimedAtMs >= (options.maxAgeMs ?? MESSAGE_CLAIM_MAX_AGE_MS)) return true;
  const [host, pid] = claim.owner.split('~');
  if (host !== (options.host ?? hostname())) return false;
  const n = Number(pid);
  return Number.isSafeInteger(n) && n > 0 && !(options.isAlive ?? processAlive)(n);
}
