/**
 * A circuit breaker for a backend that may hang rather than fail (a paused or overloaded Redis:
 * its socket stays open and commands simply get no reply). Without one, every call waits out its
 * own timeout, and a request making ten calls waits ten timeouts.
 *
 * - closed: calls run. A call failing in a way that `trips` says means "unreachable or stalled"
 *   (a timeout, a lost connection) opens the circuit.
 * - open: calls are refused at once (the caller falls back: a hot-cache miss). Every
 *   `probeEveryMs` one probe is sent (half-open meanwhile); when it answers, the circuit closes.
 *
 * So a stall costs the calls already waiting one timeout each, and later ones nothing, until a
 * probe finds the backend answering again. The probe timer is unref'd: it never keeps a process
 * alive. `open()` and `close()` let connection events (lost, ready) switch it directly.
 */
import { CtxvmError } from '../../errors.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Resolves when the backend answers (sent while open, never through the breaker). */
  probe(): Promise<unknown>;
  /** Pause before each probe while open, ms. */
  probeEveryMs: number;
  /** Whether a failed call means the backend is unreachable or stalled. */
  trips(error: unknown): boolean;
  /** The circuit opened (`error` is what tripped it). */
  onOpen?(error: unknown): void;
  /** The circuit closed again. */
  onClose?(): void;
  /** Name in the error of a refused call, e.g. `redis at 127.0.0.1:6379`. */
  what: string;
}

export interface CircuitBreakerStats {
  state: BreakerState;
  /** When the state last changed (Unix ms). */
  sinceMs: number;
  /** Times the circuit opened. */
  trips: number;
  /** Calls refused at once while open. */
  shortCircuited: number;
}

export interface CircuitBreaker {
  /** Runs `call` when closed; rejects at once with `E_UNAVAILABLE` otherwise. */
  run<T>(call: () => Promise<T>): Promise<T>;
  /** Opens the circuit (no-op when not closed). */
  open(cause: unknown): void;
  /** Closes the circuit (no-op when closed). */
  close(): void;
  stats(): CircuitBreakerStats;
  /** Stops probing for good. */
  stop(): void;
}

export function createCircuitBreaker(options: CircuitBreakerOptions): CircuitBreaker {
  let state: BreakerState = 'closed';
  let sinceMs = Date.now();
  let trips = 0;
  let shortCircuited = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const enter = (next: BreakerState) => {
    if (state === next) return;
    state = next;
    sinceMs = Date.now();
  };

  function scheduleProbe(): void {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (state !== 'open') return;
      enter('half-open');
      options.probe().then(
        () => breaker.close(),
        () => {
          if (state !== 'half-open') return;
          enter('open');
          scheduleProbe();
        },
      );
    }, options.probeEveryMs);
    timer.unref();
  }

  const breaker: CircuitBreaker = {
    run<T>(call: () => Promise<T>): Promise<T> {
      if (state !== 'closed') {
        shortCircuited++;
        return Promise.reject(
          new CtxvmError('E_UNAVAILABLE', `${options.what} is skipped: it stopped answering ${Math.round((Date.now() - sinceMs) / 100) / 10} s ago (a probe checks every ${options.probeEveryMs} ms)`),
        );
      }
      return call().catch((error: unknown) => {
        if (options.trips(error)) breaker.open(error);
        throw error;
      });
    },
    open(cause) {
      if (state !== 'closed' || stopped) return;
      trips++;
      enter('open');
      options.onOpen?.(cause);
      scheduleProbe();
    },
    close() {
      if (state === 'closed') return;
      clearTimeout(timer);
      timer = undefined;
      enter('closed');
      options.onClose?.();
    },
    stats: () => ({ state, sinceMs, trips, shortCircuited }),
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
  return breaker;
}
