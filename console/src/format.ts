/** Number, money, time and size formatting for the console's two languages (Intl, no tables). */
import type { Lang } from './i18n.js';

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function numberFormat(lang: Lang, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const id = `n ${lang} ${JSON.stringify(options)}`;
  let f = cache.get(id) as Intl.NumberFormat | undefined;
  if (!f) cache.set(id, (f = new Intl.NumberFormat(lang, options)));
  return f;
}

/** A whole number with grouping: 12,345. */
export function fmtInt(n: number, lang: Lang): string {
  return numberFormat(lang, { maximumFractionDigits: 0 }).format(Math.round(n));
}

/** A ratio as a percentage: 0.4213 → 42.1%. */
export function fmtPercent(ratio: number, lang: Lang, digits = 1): string {
  return numberFormat(lang, { style: 'percent', minimumFractionDigits: digits, maximumFractionDigits: digits }).format(ratio);
}

/** US dollars: cents from $1 up, four decimals below, two significant digits for tiny amounts. */
export function fmtUsd(usd: number): string {
  const abs = Math.abs(usd);
  const digits = abs === 0 || abs >= 1 ? 2 : abs >= 0.01 ? 4 : Math.min(10, 1 - Math.floor(Math.log10(abs)));
  return `${usd < 0 ? '−' : ''}$${abs.toFixed(digits)}`;
}

/** Milliseconds: 0.42 ms, 12.3 ms, 250 ms, 1.25 s. */
export function fmtMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** Bytes in binary units: 41.5 KiB. */
export function fmtBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

const OFFSET_ZONE = /^([+-])(\d{2}):(\d{2})$/;

/**
 * Date and time, 24-hour, in `zone` (an IANA name or an offset such as "+08:00"; default the
 * browser's): 2026-03-10 15:00 / 2026/03/10 15:00.
 */
export function fmtDateTime(at: string | number, lang: Lang, zone?: string): string {
  let date = new Date(at);
  if (Number.isNaN(date.getTime())) return String(at);
  // An offset is applied by hand and read in UTC (not every browser takes offsets as zones).
  const offset = zone ? OFFSET_ZONE.exec(zone) : null;
  if (offset) date = new Date(date.getTime() + (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000);
  const timeZone = offset ? 'UTC' : zone;
  const id = `d ${lang} ${timeZone ?? ''}`;
  let f = cache.get(id) as Intl.DateTimeFormat | undefined;
  if (!f) {
    try {
      f = new Intl.DateTimeFormat(lang === 'en' ? 'en-CA' : 'zh-CN', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...(timeZone ? { timeZone } : {}) });
    } catch {
      return fmtDateTime(at, lang);
    }
    cache.set(id, f);
  }
  return f.format(date).replace(',', '');
}

/** A value from a history entry, readable: times for `*AtMs` fields, JSON for objects, — for null. */
export function fmtValue(field: string, value: unknown, lang: Lang, zone?: string): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number' && /AtMs$/.test(field)) return fmtDateTime(value, lang, zone);
  if (typeof value === 'string') {
    // history values may arrive JSON-encoded
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed !== 'string') return fmtValue(field, parsed, lang, zone);
      return parsed;
    } catch {
      return value;
    }
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.title === 'string') return o.title;
    if (typeof o.name === 'string') return o.name;
    if (typeof o.text === 'string') return o.text;
    return JSON.stringify(value);
  }
  return String(value);
}

/** Cuts `s` to `max` characters with an ellipsis. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
