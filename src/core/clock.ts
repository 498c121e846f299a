/**
 * Time is passed in, never read from a global: every component that needs "now" takes a `Clock`,
 * so tests can freeze and advance time.
 */
import { UsageError } from '../errors.js';

/** A source of the current time. */
export interface Clock {
  /** The current time, Unix ms. */
  now(): number;
}

/** A clock that only moves when told to; for tests and replays. */
export interface FixedClock extends Clock {
  /** Jumps to an absolute time, Unix ms. */
  set(ms: number): void;
  /** Moves forward (or back, when negative) by `ms` milliseconds. */
  advance(ms: number): void;
}

/** The real wall clock (`Date.now()`), Unix ms. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** Creates a clock frozen at `ms` (Unix ms) that moves only through `set` and `advance`. */
export function createFixedClock(ms: number): FixedClock {
  let current = checkInstant(ms, 'createFixedClock');
  return {
    now: () => current,
    set(next: number) {
      current = checkInstant(next, 'FixedClock.set');
    },
    advance(deltaMs: number) {
      current = checkInstant(current + checkFinite(deltaMs, 'FixedClock.advance'), 'FixedClock.advance');
    },
  };
}

// ±8.64e15 ms is the range a JavaScript Date can represent.
const MAX_INSTANT_MS = 8.64e15;

function checkFinite(value: number, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new UsageError(`${where}: expected a finite number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function checkInstant(value: number, where: string): number {
  checkFinite(value, where);
  if (Math.abs(value) > MAX_INSTANT_MS) {
    throw new UsageError(`${where}: ${value} is outside the range of a Date (±8.64e15 ms)`);
  }
  return value;
}
