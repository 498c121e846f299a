/** Option parsers shared by the memory and chat commands. */
import { validateTimeZone, type TimeZone } from '../core/time-zone.js';
import { UsageError } from '../errors.js';
import { systemTimeZone } from './memory-services.js';

/** Parses an ISO-8601 instant given on the command line, Unix ms. */
export function parseInstant(value: string, flag: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new UsageError(`${flag} must be an ISO-8601 time, got ${JSON.stringify(value)}`, { hint: 'e.g. 2026-03-10T09:30:00+08:00' });
  return ms;
}

/** Parses `--tz`: an IANA name, "+08:00", or minutes east of UTC. */
export function parseTimeZoneOption(value: string): TimeZone {
  try {
    return validateTimeZone(/^[+-]?\d+$/.test(value) ? Number(value) : value);
  } catch (cause) {
    throw new UsageError(`--tz: unknown time zone ${JSON.stringify(value)}`, { cause, hint: 'use an IANA name like Asia/Shanghai, an offset like +08:00, or minutes east of UTC' });
  }
}

/** `--tz` as the zone of users who have stated none: the one given, else this machine's. */
export function defaultZoneOption(value: string | undefined): TimeZone {
  return value !== undefined ? parseTimeZoneOption(value) : systemTimeZone();
}

/** A commander parser for a positive integer option. */
export function positiveInt(flag: string) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive integer, got ${JSON.stringify(value)}`);
    return n;
  };
}

/** Validates a `--user` value. */
export function requireUser(value: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError('--user must be a non-empty user id');
  return value;
}
