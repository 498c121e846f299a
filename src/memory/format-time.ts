/** Renders instants for people and prompts, in the user's zone, the same way everywhere. */
import { offsetMinutesAt, zonedParts, type TimeZone } from '../core/time-zone.js';

const pad = (n: number) => String(n).padStart(2, '0');
const WEEKDAYS_EN = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** "2026-03-10 15:00 Tue" — date, 24-hour time and weekday in `zone`. */
export function formatLocalTime(instantMs: number, zone: TimeZone): string {
  const p = zonedParts(instantMs, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)} ${WEEKDAYS_EN[p.weekday]}`;
}

/** "2026-03-10" in `zone`. */
export function formatLocalDate(instantMs: number, zone: TimeZone): string {
  const p = zonedParts(instantMs, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

/** "15:00" in `zone`. */
export function formatLocalClock(instantMs: number, zone: TimeZone): string {
  const p = zonedParts(instantMs, zone);
  return `${pad(p.hour)}:${pad(p.minute)}`;
}

/** "UTC+08:00", "UTC-04:00", "UTC+05:30": the offset of `zone` at `instantMs`. */
export function formatUtcOffset(instantMs: number, zone: TimeZone): string {
  const minutes = offsetMinutesAt(zone, instantMs);
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The zone as people read it: its IANA name, or "UTC+08:00" for a fixed offset. */
export function zoneLabel(zone: TimeZone): string {
  if (typeof zone === 'string') return zone;
  const abs = Math.abs(zone);
  return `UTC${zone < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** "2026-03-10 15:00 Tue (Asia/Shanghai)": a local time that names its zone. */
export function formatZonedTime(instantMs: number, zone: TimeZone): string {
  return `${formatLocalTime(instantMs, zone)} (${zoneLabel(zone)})`;
}

/** A zone as stored and sent: its IANA name, or an offset such as "+08:00" (read back by validateTimeZone). */
export function zoneId(zone: TimeZone): string {
  if (typeof zone === 'string') return zone;
  const abs = Math.abs(zone);
  return `${zone < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
