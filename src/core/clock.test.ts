import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../errors.js';
import { createFixedClock, systemClock } from './clock.js';

describe('systemClock', () => {
  it('reads the real time', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe('createFixedClock', () => {
  it('stays where it was put until moved', () => {
    const clock = createFixedClock(1_773_192_600_000);
    expect(clock.now()).toBe(1_773_192_600_000);
    expect(clock.now()).toBe(1_773_192_600_000);
    clock.advance(90_000);
    expect(clock.now()).toBe(1_773_192_690_000);
    clock.advance(-1_000);
    expect(clock.now()).toBe(1_773_192_689_000);
    clock.set(0);
    expect(clock.now()).toBe(0);
  });

  it('rejects times a Date cannot hold', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      expect(() => createFixedClock(bad)).toThrow(CtxvmError);
    }
    const clock = createFixedClock(8.64e15);
    expect(() => clock.advance(1)).toThrow(/outside the range/);
    expect(() => clock.set(Number.NaN)).toThrow(/finite/);
    expect(clock.now()).toBe(8.64e15);
  });
});
