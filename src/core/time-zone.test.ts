import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../errors.js';
import { offsetMinutesAt, startOfZonedDay, validateTimeZone, zonedParts, zonedTimeToInstant } from './time-zone.js';
import type { TimeZone } from './time-zone.js';

const utc = (iso: string) => Date.parse(iso);

describe('offsetMinutesAt', () => {
  it.each<[TimeZone, string, number]>([
    ['Asia/Shanghai', '2026-03-11T01:30:00Z', 480],
    ['America/New_York', '2026-01-15T12:00:00Z', -300],
    ['America/New_York', '2026-07-15T12:00:00Z', -240],
    // The spring-forward instant itself: 07:00Z is 03:00 EDT.
    ['America/New_York', '2026-03-08T06:59:59Z', -300],
    ['America/New_York', '2026-03-08T07:00:00Z', -240],
    ['Asia/Kathmandu', '2026-03-11T00:00:00Z', 345],
    ['Australia/Lord_Howe', '2026-01-15T00:00:00Z', 660],
    ['Australia/Lord_Howe', '2026-07-15T00:00:00Z', 630],
    ['UTC', '2026-03-11T00:00:00Z', 0],
    [480, '2026-03-11T00:00:00Z', 480],
    [-210, '2026-03-11T00:00:00Z', -210],
    ['+05:30', '2026-03-11T00:00:00Z', 330],
    ['-0800', '2026-03-11T00:00:00Z', -480],
    ['UTC+8', '2026-03-11T00:00:00Z', 480],
    ['Z', '2026-03-11T00:00:00Z', 0],
  ])('%s at %s is %i minutes', (zone, iso, minutes) => {
    expect(offsetMinutesAt(zone, utc(iso))).toBe(minutes);
  });

  it('gives the same answer from the cache as from a fresh zone', () => {
    // Two different spellings of the zone share nothing in the zone cache.
    for (let t = utc('2026-03-07T00:00:00Z'); t < utc('2026-03-09T00:00:00Z'); t += 7 * 60_000) {
      expect(offsetMinutesAt('America/New_York', t)).toBe(offsetMinutesAt('america/new_york', t));
    }
  });
});

describe('zonedParts', () => {
  it('reads the wall clock, including the weekday (0 = Sunday)', () => {
    const instant = utc('2026-03-10T23:00:00Z');
    expect(zonedParts(instant, 'Asia/Shanghai')).toEqual({ year: 2026, month: 3, day: 11, hour: 7, minute: 0, second: 0, weekday: 3 });
    expect(zonedParts(instant, 'America/New_York')).toEqual({ year: 2026, month: 3, day: 10, hour: 19, minute: 0, second: 0, weekday: 2 });
    expect(zonedParts(instant, -600)).toEqual({ year: 2026, month: 3, day: 10, hour: 13, minute: 0, second: 0, weekday: 2 });
  });

  it('crosses a year boundary', () => {
    expect(zonedParts(utc('2026-12-31T16:30:15Z'), 'Asia/Tokyo')).toMatchObject({ year: 2027, month: 1, day: 1, hour: 1, minute: 30, second: 15, weekday: 5 });
  });
});

describe('zonedTimeToInstant', () => {
  it('places an ordinary wall time', () => {
    expect(zonedTimeToInstant({ year: 2026, month: 3, day: 11, hour: 9, minute: 30 }, 'Asia/Shanghai')).toBe(utc('2026-03-11T01:30:00Z'));
    expect(zonedTimeToInstant({ year: 2026, month: 3, day: 11, hour: 9, minute: 30, second: 5, millisecond: 7 }, '+08:00')).toBe(
      utc('2026-03-11T01:30:05.007Z'),
    );
  });

  it('moves a time in a spring-forward gap forward by the gap', () => {
    expect(zonedTimeToInstant({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, 'America/New_York')).toBe(utc('2026-03-08T07:30:00Z'));
    // Lord Howe springs forward by only 30 minutes, 02:00 -> 02:30.
    expect(zonedTimeToInstant({ year: 2026, month: 10, day: 4, hour: 2, minute: 15 }, 'Australia/Lord_Howe')).toBe(utc('2026-10-03T15:45:00Z'));
  });

  it('picks the earlier instant of an ambiguous fall-back time', () => {
    expect(zonedTimeToInstant({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, 'America/New_York')).toBe(utc('2026-11-01T05:30:00Z'));
    expect(zonedTimeToInstant({ year: 2026, month: 11, day: 1, hour: 2, minute: 0 }, 'America/New_York')).toBe(utc('2026-11-01T07:00:00Z'));
  });

  it('rolls over out-of-range fields like Date.UTC', () => {
    expect(zonedTimeToInstant({ year: 2026, month: 2, day: 29, hour: 24, minute: 0 }, 'UTC')).toBe(utc('2026-03-02T00:00:00Z'));
  });

  it('inverts zonedParts for any instant (the earlier one where the wall time repeats)', () => {
    const zones: TimeZone[] = ['Asia/Shanghai', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/Sao_Paulo', 345, -570];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), fc.constantFrom(...zones), (seconds, zone) => {
        const instant = seconds * 1000;
        const p = zonedParts(instant, zone);
        const back = zonedTimeToInstant(p, zone);
        expect(zonedParts(back, zone)).toEqual(p);
        expect(back).toBeLessThanOrEqual(instant);
        // Only a repeated hour can map back to an earlier instant, and never by more than that hour.
        expect(instant - back === 0 || instant - back === 3_600_000 || instant - back === 1_800_000).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('startOfZonedDay', () => {
  it('finds local midnight', () => {
    expect(startOfZonedDay(utc('2026-03-10T23:00:00Z'), 'Asia/Shanghai')).toBe(utc('2026-03-10T16:00:00Z'));
    // The spring-forward day in New York still starts at 00:00 EST.
    expect(startOfZonedDay(utc('2026-03-08T20:00:00Z'), 'America/New_York')).toBe(utc('2026-03-08T05:00:00Z'));
  });

  it('starts at 01:00 on a day whose midnight is skipped', () => {
    // Beirut moves its clocks from 00:00 to 01:00 on the last Sunday of March.
    expect(startOfZonedDay(utc('2026-03-29T09:00:00Z'), 'Asia/Beirut')).toBe(utc('2026-03-28T22:00:00Z'));
  });
});

describe('validateTimeZone', () => {
  it('normalises names and offsets', () => {
    expect(validateTimeZone('asia/shanghai')).toBe('Asia/Shanghai');
    expect(validateTimeZone(' +08:00 ')).toBe(480);
    expect(validateTimeZone('-03:30')).toBe(-210);
    expect(validateTimeZone(-0)).toBe(0);
    expect(validateTimeZone(600)).toBe(600);
  });

  it('rejects unknown names with a hint that suggests the right one', () => {
    const error = captureError(() => validateTimeZone('Shanghai'));
    expect(CtxvmError.is(error) && error.code).toBe('E_USAGE');
    expect((error as CtxvmError).message).toContain('"Shanghai"');
    expect((error as CtxvmError).hint).toContain('Asia/Shanghai');
    expect((captureError(() => validateTimeZone('New York')) as CtxvmError).hint).toContain('America/New_York');
    expect((captureError(() => validateTimeZone('Mars/Olympus')) as CtxvmError).hint).toMatch(/IANA/);
  });

  it.each<TimeZone>(['+25:00', '+08:75', 1081, 1.5, Number.NaN, ''])('rejects %s', (zone) => {
    expect(() => validateTimeZone(zone)).toThrow(CtxvmError);
  });

  it('rejects the same bad zone in every helper', () => {
    expect(() => zonedParts(0, 'Nowhere/City')).toThrow(/invalid time zone/);
    expect(() => offsetMinutesAt('Nowhere/City', 0)).toThrow(/invalid time zone/);
    expect(() => zonedParts(Number.NaN, 'UTC')).toThrow(/Unix ms/);
  });
});

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
