/**
 * Wall-clock arithmetic in a user's time zone, for IANA zone names ("Asia/Shanghai") and fixed
 * UTC offsets (a number of minutes east of UTC, or a string such as "+08:00").
 *
 * Built on `Intl.DateTimeFormat`. Formatters are cached per zone, and UTC offsets are cached per
 * zone in 15-minute buckets: every transition since 1970 falls on a quarter hour (UTC), so a
 * bucket never straddles one. Earlier instants (local mean time had odd offsets) are not cached.
 */
import { UsageError } from '../errors.js';

/** An IANA zone name ("Europe/Berlin", "UTC"), an offset string ("+08:00", "-0530"), or minutes east of UTC. */
export type TimeZone = string | number;

/** Wall-clock fields of an instant in a zone. `month` is 1-12, `weekday` 0 (Sunday) to 6 (Saturday). */
export interface ZonedParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

/** A wall-clock time to place in a zone. Out-of-range fields roll over like `Date.UTC` (day 32 = next month). */
export interface ZonedTimeFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second?: number;
  millisecond?: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const BUCKET_MS = 15 * MINUTE_MS;
const MAX_OFFSET_MINUTES = 18 * 60;
const OFFSET_CACHE_LIMIT = 4096;
const ZONE_CACHE_LIMIT = 256;

interface FixedZone {
  kind: 'fixed';
  offsetMs: number;
}

interface NamedZone {
  kind: 'named';
  name: string;
  format: Intl.DateTimeFormat;
  offsets: Map<number, number>;
}

type ResolvedZone = FixedZone | NamedZone;

const zoneCache = new Map<string, ResolvedZone>();

/** Throws a UsageError (with a hint) unless `zone` is usable; returns it normalised (canonical name or minutes). */
export function validateTimeZone(zone: TimeZone): TimeZone {
  const resolved = resolveZone(zone);
  return resolved.kind === 'fixed' ? resolved.offsetMs / MINUTE_MS : resolved.name;
}

/** Offset of `zone` from UTC at `instantMs` (Unix ms), in minutes east of UTC (+480 for Asia/Shanghai). */
export function offsetMinutesAt(zone: TimeZone, instantMs: number): number {
  return offsetMsAt(resolveZone(zone), checkInstant(instantMs)) / MINUTE_MS;
}

/** Wall-clock fields of `instantMs` (Unix ms) as seen in `zone`. */
export function zonedParts(instantMs: number, zone: TimeZone): ZonedParts {
  const local = new Date(checkInstant(instantMs) + offsetMsAt(resolveZone(zone), instantMs));
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    weekday: local.getUTCDay(),
  };
}

/**
 * The instant (Unix ms) at which the wall clock in `zone` shows `fields`. An ambiguous time (clocks
 * turned back) gives the earlier instant; a time skipped by a gap (clocks turned forward) is moved
 * forward by the length of the gap (02:30 on a spring-forward night in New York becomes 03:30).
 */
export function zonedTimeToInstant(fields: ZonedTimeFields, zone: TimeZone): number {
  const resolved = resolveZone(zone);
  const localMs = wallClockMs(fields);
  if (resolved.kind === 'fixed') return localMs - resolved.offsetMs;
  // A zone changes its offset at most once within a day, so the offsets a day either side bound
  // every candidate; a candidate is real when the zone's offset at it maps it back to localMs.
  const before = offsetMsAt(resolved, localMs - DAY_MS);
  const after = offsetMsAt(resolved, localMs + DAY_MS);
  const early = localMs - Math.max(before, after);
  const late = localMs - Math.min(before, after);
  if (offsetMsAt(resolved, early) + early === localMs) return early;
  if (offsetMsAt(resolved, late) + late === localMs) return late;
  // In a gap: read the wall time with the offset in force before the transition.
  return localMs - before;
}

/** The first instant (Unix ms) of the calendar day containing `instantMs` in `zone`. */
export function startOfZonedDay(instantMs: number, zone: TimeZone): number {
  const p = zonedParts(instantMs, zone);
  return zonedTimeToInstant({ year: p.year, month: p.month, day: p.day, hour: 0, minute: 0 }, zone);
}

/** Milliseconds since the epoch of a wall-clock reading taken as if it were UTC; years 0-99 are literal. */
function wallClockMs(fields: ZonedTimeFields): number {
  const { year, month, day, hour, minute, second = 0, millisecond = 0 } = fields;
  for (const [name, value] of Object.entries({ year, month, day, hour, minute, second, millisecond })) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new UsageError(`zonedTimeToInstant: field "${name}" must be a finite number, got ${String(value)}`);
    }
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return checkInstant(date.getTime());
}

function checkInstant(instantMs: number): number {
  if (typeof instantMs !== 'number' || !Number.isFinite(instantMs) || Math.abs(instantMs) > 8.64e15) {
    throw new UsageError(`expected an instant in Unix ms, got ${String(instantMs)}`);
  }
  return instantMs;
}

function offsetMsAt(zone: ResolvedZone, instantMs: number): number {
  if (zone.kind === 'fixed') return zone.offsetMs;
  const bucket = instantMs >= 0 ? Math.floor(instantMs / BUCKET_MS) : undefined;
  if (bucket !== undefined) {
    const cached = zone.offsets.get(bucket);
    if (cached !== undefined) return cached;
  }
  const offset = computeOffsetMs(zone.format, instantMs);
  if (bucket !== undefined) {
    if (zone.offsets.size >= OFFSET_CACHE_LIMIT) zone.offsets.clear();
    zone.offsets.set(bucket, offset);
  }
  return offset;
}

function computeOffsetMs(format: Intl.DateTimeFormat, instantMs: number): number {
  const fields: Record<string, number> = {};
  let bc = false;
  for (const part of format.formatToParts(instantMs)) {
    if (part.type === 'era') bc = /^B/i.test(part.value);
    else if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const date = new Date(0);
  date.setUTCFullYear(bc ? 1 - (fields.year ?? 0) : (fields.year ?? 1970), (fields.month ?? 1) - 1, fields.day ?? 1);
  // Some ICU versions print midnight as hour 24 even with hourCycle h23.
  date.setUTCHours((fields.hour ?? 0) % 24, fields.minute ?? 0, fields.second ?? 0, 0);
  const flooredInstant = instantMs - (((instantMs % 1000) + 1000) % 1000);
  return date.getTime() - flooredInstant;
}

function resolveZone(zone: TimeZone): ResolvedZone {
  if (typeof zone === 'number') return fixedZone(zone, String(zone));
  if (typeof zone !== 'string') {
    throw new UsageError(`invalid time zone ${String(zone)}: expected a string or a number of minutes`, { hint: ZONE_HINT });
  }
  const cached = zoneCache.get(zone);
  if (cached) return cached;
  const resolved = parseZoneString(zone);
  if (zoneCache.size >= ZONE_CACHE_LIMIT) zoneCache.clear();
  zoneCache.set(zone, resolved);
  return resolved;
}

const OFFSET_PATTERN = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const ZONE_HINT = 'use an IANA zone name such as "Asia/Shanghai" or "America/New_York", or a UTC offset such as "+08:00"';

function parseZoneString(raw: string): ResolvedZone {
  const text = raw.trim();
  if (text === 'Z' || text === 'z') return fixedZone(0, raw);
  const offset = OFFSET_PATTERN.exec(text);
  if (offset) {
    const sign = offset[1] === '-' ? -1 : 1;
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
    if (Number(offset[3] ?? 0) >= 60) throw badZone(raw, 'minutes must be below 60');
    return fixedZone(sign * minutes, raw);
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: text,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch (cause) {
    throw badZone(raw, 'not a known IANA time zone', cause);
  }
  return { kind: 'named', name: format.resolvedOptions().timeZone, format, offsets: new Map() };
}

function fixedZone(minutes: number, raw: string): FixedZone {
  if (!Number.isInteger(minutes) || Math.abs(minutes) > MAX_OFFSET_MINUTES) {
    throw badZone(raw, `a UTC offset must be a whole number of minutes within ±${MAX_OFFSET_MINUTES}`);
  }
  // Normalise -0 so that fixed zones compare and print cleanly.
  return { kind: 'fixed', offsetMs: minutes === 0 ? 0 : minutes * MINUTE_MS };
}

function badZone(raw: string, reason: string, cause?: unknown): UsageError {
  const suggestions = suggestZones(raw);
  const hint = suggestions.length > 0 ? `did you mean ${suggestions.join(' or ')}? Otherwise ${ZONE_HINT}` : ZONE_HINT;
  return new UsageError(`invalid time zone "${raw}": ${reason}`, { hint, cause });
}

function suggestZones(raw: string): string[] {
  const needle = raw.trim().toLowerCase().replace(/\s+/g, '_');
  if (needle.length < 3 || typeof Intl.supportedValuesOf !== 'function') return [];
  const names = Intl.supportedValuesOf('timeZone');
  const byCity = names.filter((name) => name.toLowerCase().split('/').pop() === needle);
  const matches = byCity.length > 0 ? byCity : names.filter((name) => name.toLowerCase().includes(needle));
  return matches.slice(0, 3);
}
