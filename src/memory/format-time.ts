/** Renders instants for people and prompts, in the user's zone, the same way everywhere. */
import { zonedParts, type TimeZone } from '../core/time-zone.js';

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
