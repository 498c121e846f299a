/**
 * Where a date of another calendar falls in the Gregorian one: the Chinese lunisolar calendar
 * and its solar terms (lunar-javascript), the Hebrew and Islamic calendars (the ICU calendars
 * built into Node's Intl), and Easter by the Gregorian and Julian computus. Each answer is a
 * civil date; callers place it in the user's zone.
 *
 * The ICU tables are read once per calendar and Gregorian year and kept (a year's table is a
 * few hundred entries; holidays ask for a handful of years).
 */
import { createRequire } from 'node:module';
import { addDays } from './date-calendar.js';
import type { CivilDate } from './date-calendar.js';

interface LunarSolar {
  getYear(): number;
  getMonth(): number;
  getDay(): number;
}
interface LunarJs {
  Lunar: { fromYmd(year: number, month: number, day: number): { getSolar(): LunarSolar } };
  Solar: { fromYmd(year: number, month: number, day: number): { getLunar(): { getJieQiTable(): Record<string, LunarSolar> } } };
}

let lunarJs: LunarJs | undefined;
function lunar(): LunarJs {
  // Synchronous and lazy, like the other calendars: only holiday phrases need it.
  lunarJs ??= createRequire(import.meta.url)('lunar-javascript') as LunarJs;
  return lunarJs;
}

const civilOf = (s: LunarSolar): CivilDate => ({ year: s.getYear(), month: s.getMonth(), day: s.getDay() });

/** The Gregorian date of day `day` of month `month` (1-12) of Chinese lunar year `lunarYear`. */
export function chineseLunarDate(lunarYear: number, month: number, day: number): CivilDate {
  return civilOf(lunar().Lunar.fromYmd(lunarYear, month, day).getSolar());
}

/** The day of a solar term (清明, 冬至, ...) in Gregorian `year`, or undefined for an unknown name. */
export function solarTerm(name: string, year: number): CivilDate | undefined {
  const table = lunar().Solar.fromYmd(year, 6, 1).getLunar().getJieQiTable();
  const found = table[name];
  return found && found.getYear() === year ? civilOf(found) : undefined;
}

/** Easter Sunday of `year` (Gregorian computus, "Anonymous Gregorian algorithm"). */
export function westernEaster(year: number): CivilDate {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return { year, month, day };
}

/** Orthodox Easter of `year`: the Julian computus, moved onto the Gregorian calendar. */
export function orthodoxEaster(year: number): CivilDate {
  const a = year % 4;
  const b = year % 7;
  const c = year % 19;
  const d = (19 * c + 15) % 30;
  const e = (2 * a + 4 * b - d + 34) % 7;
  const month = Math.floor((d + e + 114) / 31);
  const day = ((d + e + 114) % 31) + 1;
  // Julian to Gregorian: the gap grows by one day in each century year not divisible by 400.
  const gap = Math.floor(year / 100) - Math.floor(year / 400) - 2;
  return addDays({ year, month, day }, gap);
}

type IcuCalendar = 'hebrew' | 'islamic-umalqura' | 'islamic';
const icuTables = new Map<string, Map<string, CivilDate[]>>();
const ICU_TABLES_KEPT = 64;

/**
 * The Gregorian days of `year` on which the ICU calendar's date reads `month day` (the month's
 * English name for Hebrew — its month numbers shift in leap years — and its number for Islamic).
 */
function icuDays(calendar: IcuCalendar, year: number, month: string, day: number): CivilDate[] {
  const key = `${calendar}|${year}`;
  let table = icuTables.get(key);
  if (!table) {
    table = new Map();
    const format = new Intl.DateTimeFormat(`en-u-ca-${calendar}`, { timeZone: 'UTC', month: calendar === 'hebrew' ? 'long' : 'numeric', day: 'numeric' });
    for (let date: CivilDate = { year, month: 1, day: 1 }; date.year === year; date = addDays(date, 1)) {
      const instant = new Date(0);
      instant.setUTCFullYear(date.year, date.month - 1, date.day);
      const parts = format.formatToParts(instant);
      const m = parts.find((p) => p.type === 'month')?.value ?? '';
      const d = parts.find((p) => p.type === 'day')?.value ?? '';
      const k = `${m}|${Number(d)}`;
      const list = table.get(k);
      if (list) list.push(date);
      else table.set(k, [date]);
    }
    if (icuTables.size >= ICU_TABLES_KEPT) icuTables.delete(icuTables.keys().next().value!);
    icuTables.set(key, table);
  }
  return table.get(`${month}|${day}`) ?? [];
}

/** Hebrew month names as ICU writes them in English. */
export type HebrewMonth = 'Tishri' | 'Heshvan' | 'Kislev' | 'Tevet' | 'Shevat' | 'Adar' | 'Adar II' | 'Nisan' | 'Iyar' | 'Sivan' | 'Tamuz' | 'Av' | 'Elul';

/** The first Gregorian day of `year` that is `day` `month` in the Hebrew calendar (Adar means Adar II in a leap year). */
export function hebrewDate(year: number, month: HebrewMonth, day: number): CivilDate | undefined {
  if (month === 'Adar') return icuDays('hebrew', year, 'Adar II', day)[0] ?? icuDays('hebrew', year, 'Adar', day)[0];
  return icuDays('hebrew', year, month, day)[0];
}

/**
 * The first Gregorian day of `year` that is `day` of Islamic month `month` (1-12). Umm al-Qura
 * from 2000 on (its current sighting rule dates from 1420 AH); the astronomical Islamic
 * calendar before, where Umm al-Qura's tables do not describe what was observed.
 */
export function islamicDate(year: number, month: number, day: number): CivilDate | undefined {
  return icuDays(year >= 2000 ? 'islamic-umalqura' : 'islamic', year, String(month), day)[0];
}
