/**
 * Hindu festivals, computed from the sky (astronomy-engine): the amanta lunisolar calendar
 * (months from new moon to new moon, named by the sidereal sign the Sun is in at the new moon,
 * a month with no sign change being the intercalary adhika month, skipped), tithis (each 12° of
 * the Moon's elongation from the Sun), the sidereal solar months (the Sun's entry into a sign,
 * Lahiri ayanamsa) and the Moon's nakshatra.
 *
 * A festival is the first civil day, in India (UTC+05:30), on which its tithi is current during
 * the part of the day the observance is tied to: sunrise for most, midday for Ganesh Chaturthi,
 * the afternoon (aparahna) for Dussehra, the evening (pradosh, about 2h24m after sunset) for
 * Diwali, Dhanteras and Holika Dahan, moonrise for Karva Chauth, midnight (nishita) for Maha
 * Shivaratri. Fixed IST hours stand in for local sunrise and sunset; regional calendars can
 * differ by a day.
 */
import { createRequire } from 'node:module';
import { addDays } from './date-calendar.js';
import type { CivilDate } from './date-calendar.js';

interface AstroTime {
  date: Date;
  AddDays(days: number): AstroTime;
}
interface AstronomyEngine {
  MoonPhase(date: Date): number;
  SunPosition(date: Date): { elon: number };
  EclipticGeoMoon(date: Date): { lon: number };
  SearchMoonPhase(targetLon: number, start: Date | AstroTime, limitDays: number): AstroTime | null;
  SearchSunLongitude(targetLon: number, start: Date, limitDays: number): AstroTime | null;
}

let engine: AstronomyEngine | undefined;
function astronomy(): AstronomyEngine {
  engine ??= createRequire(import.meta.url)('astronomy-engine') as AstronomyEngine;
  return engine;
}

const IST_MS = 330 * 60_000;
const DAY_MS = 86_400_000;
/** Parts of the day (IST, from and to in hours) an observance is tied to. */
const SUNRISE: Window = [6, 6];
const MIDDAY: Window = [11, 13.5];
const AFTERNOON: Window = [13.5, 16];
const PRADOSH: Window = [17.75, 20.15];
const MOONRISE: Window = [20, 21];
const MIDNIGHT: Window = [23.7, 24.5];
type Window = readonly [number, number];

/** Amanta month names, Chaitra first. */
const MONTHS = ['chaitra', 'vaishakha', 'jyeshtha', 'ashadha', 'shravana', 'bhadrapada', 'ashvin', 'kartika', 'margashirsha', 'pausha', 'magha', 'phalguna'] as const;
type Month = (typeof MONTHS)[number];

interface LunarRule {
  month: Month;
  /** 1-15 the bright half (shukla), 16-30 the dark half (krishna), 30 the new moon. */
  tithi: number;
  /** The part of the day in which the tithi must be current. */
  window: Window;
}

const LUNAR: Readonly<Record<string, LunarRule>> = {
  ugadi: { month: 'chaitra', tithi: 1, window: SUNRISE },
  vesak: { month: 'vaishakha', tithi: 15, window: SUNRISE },
  rakshaBandhan: { month: 'shravana', tithi: 15, window: SUNRISE },
  ganeshChaturthi: { month: 'bhadrapada', tithi: 4, window: MIDDAY },
  dussehra: { month: 'ashvin', tithi: 10, window: AFTERNOON },
  valmikiJayanti: { month: 'ashvin', tithi: 15, window: SUNRISE },
  karvaChauth: { month: 'ashvin', tithi: 19, window: MOONRISE },
  dhanteras: { month: 'ashvin', tithi: 28, window: PRADOSH },
  diwali: { month: 'ashvin', tithi: 30, window: PRADOSH },
  chhath: { month: 'kartika', tithi: 6, window: SUNRISE },
  ravidasJayanti: { month: 'magha', tithi: 15, window: SUNRISE },
  mahaShivaratri: { month: 'magha', tithi: 29, window: MIDNIGHT },
  holikaDahan: { month: 'phalguna', tithi: 15, window: PRADOSH },
};

export type HinduFestival = keyof typeof LUNAR | 'holi' | 'pongal' | 'onam' | 'rabindraJayanti';

/** Lahiri ayanamsa, degrees: the sidereal zodiac's offset from the tropical one. */
function ayanamsa(date: Date): number {
  const years = (date.getTime() - Date.UTC(2000, 0, 1, 12)) / (365.25 * DAY_MS);
  return 23.853 + years * 0.0139694;
}
const siderealSun = (date: Date) => (((astronomy().SunPosition(date).elon - ayanamsa(date)) % 360) + 360) % 360;
const siderealMoon = (date: Date) => (((astronomy().EclipticGeoMoon(date).lon - ayanamsa(date)) % 360) + 360) % 360;
const tithiAt = (date: Date) => Math.floor(astronomy().MoonPhase(date) / 12) + 1;
const istInstant = (day: CivilDate, hour: number) => new Date(Date.UTC(day.year, day.month - 1, day.day) + hour * 3_600_000 - IST_MS);
const istDay = (date: Date): CivilDate => {
  const d = new Date(date.getTime() + IST_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
};

interface LunarMonth {
  name: Month;
  adhika: boolean;
  start: Date;
  end: Date;
}

const monthsByYear = new Map<number, LunarMonth[]>();
const YEARS_KEPT = 16;

/** The amanta months that overlap Gregorian `year`. */
function lunarMonths(year: number): LunarMonth[] {
  let months = monthsByYear.get(year);
  if (months) return months;
  const a = astronomy();
  const moons: Date[] = [];
  let t = a.SearchMoonPhase(0, new Date(Date.UTC(year - 1, 11, 1)), 40);
  while (t && t.date.getTime() < Date.UTC(year + 1, 1, 1)) {
    moons.push(t.date);
    t = a.SearchMoonPhase(0, t.AddDays(1), 40);
  }
  const signs = moons.map((m) => Math.floor(siderealSun(m) / 30));
  months = [];
  for (let i = 0; i + 1 < moons.length; i++) {
    months.push({ name: MONTHS[(signs[i]! + 1) % 12]!, adhika: signs[i] === signs[i + 1], start: moons[i]!, end: moons[i + 1]! });
  }
  if (monthsByYear.size >= YEARS_KEPT) monthsByYear.delete(monthsByYear.keys().next().value!);
  monthsByYear.set(year, months);
  return months;
}

/** The day of a tithi-defined festival in Gregorian `year`, if it falls in that year. */
function lunarFestival(rule: LunarRule, year: number): CivilDate | undefined {
  for (const month of lunarMonths(year)) {
    if (month.name !== rule.month || month.adhika) continue;
    let day = istDay(month.start);
    for (let i = 0; i < 32; i++, day = addDays(day, 1)) {
      const from = istInstant(day, rule.window[0]);
      const to = istInstant(day, rule.window[1]);
      // (Before the new moon that starts the month, the tithi is still the last month's.)
      if (to < month.start) continue;
      if (from >= month.end) break;
      const first = tithiAt(from < month.start ? month.start : from);
      const last = tithiAt(to >= month.end ? new Date(month.end.getTime() - 1) : to);
      // Tithis only advance, and a window is shorter than one: current at some moment of it.
      if ((rule.tithi - first + 30) % 30 <= (last - first + 30) % 30) {
        if (day.year === year) return day;
        break;
      }
    }
  }
  return undefined;
}

/** The civil day (IST) on which the sidereal Sun enters the sign starting at `longitude`, in `year`. */
function sankranti(longitude: number, year: number, fromMonth: number): Date | undefined {
  // Search for the tropical longitude that is the sidereal one plus the ayanamsa.
  const start = new Date(Date.UTC(year, fromMonth - 1, 1));
  const found = astronomy().SearchSunLongitude((longitude + ayanamsa(start)) % 360, start, 60);
  return found?.date;
}

/** The Gregorian date of `festival` in `year` (India), or undefined if it has none that year. */
export function hinduFestival(festival: HinduFestival, year: number): CivilDate | undefined {
  if (festival === 'holi') {
    const dahan = lunarFestival(LUNAR.holikaDahan!, year);
    return dahan ? addDays(dahan, 1) : undefined;
  }
  if (festival === 'pongal') {
    // Makara Sankranti: the Sun enters sidereal Capricorn; after sunset it counts from the next day.
    const ingress = sankranti(270, year, 1);
    if (!ingress) return undefined;
    const day = istDay(ingress);
    return istInstant(day, 18) < ingress ? addDays(day, 1) : day;
  }
  if (festival === 'rabindraJayanti') {
    // 25 Boishakh: Boishakh begins the day after the Sun enters sidereal Aries.
    const ingress = sankranti(0, year, 3);
    return ingress ? addDays(istDay(ingress), 25) : undefined;
  }
  if (festival === 'onam') {
    // Thiruvonam: the day in the solar month of Chingam (the Sun in sidereal Leo) whose sunrise
    // falls in the nakshatra Shravana (the Moon between 280° and 293°20′).
    const ingress = sankranti(120, year, 7);
    if (!ingress) return undefined;
    let day = istDay(ingress);
    for (let i = 0; i < 31; i++, day = addDays(day, 1)) {
      const moon = siderealMoon(istInstant(day, SUNRISE[0]));
      if (moon >= 280 && moon < 280 + 40 / 3) return day;
    }
    return undefined;
  }
  const rule = LUNAR[festival];
  return rule ? lunarFestival(rule, year) : undefined;
}
