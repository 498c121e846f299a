/**
 * Names people give their time zone ("PST", "Berlin", "Pacific Time", "中国", "纽约", "东八区",
 * "UTC+8") → an IANA zone or a fixed offset, from the zone database the runtime ships (ICU's copy
 * of the IANA database and of CLDR's zone names, read through `Intl`), not from a list of phrases:
 *
 * 1. A zone id or an offset as `validateTimeZone` takes it ("Asia/Shanghai", "+08:00", "GMT-5");
 *    a Chinese offset zone ("东八区" → +08:00, "西五区" → -05:00).
 * 2. The city of a zone id ("berlin", "new york", "buenos aires").
 * 3. CLDR's names of each zone in English and Chinese, standard and summer, with and without
 *    their "Time"/"时间" suffix: metazones ("Pacific Time", "北美东部时间"), abbreviations
 *    ("PST", "EDT"), and locations ("Germany", "德国", "纽约", "温哥华", "香港").
 *
 4. Places in China, Hong Kong, Macau and Taiwan by their Chinese names, from the GB/T 2260
 *    administrative divisions (`china-area-data`: provinces, cities, districts, with or without
 *    市/省/区…): CLDR names China's zone after the country, not after 上海 or 北京. A place goes
 *    to its region's main zone (the one CLDR names after the region: Asia/Shanghai for CN).
 *
 * A name several zones share ("PST", "Central European Time") goes to the zone of the country
 * with the most zones, then the first id in order; zones sharing a name within one country keep
 * the same clock today (America/Boise and America/Denver), which is what a user means by it.
 * Not covered: foreign cities CLDR does not name in Chinese because their country's only or main
 * zone is named after the country (柏林, 伦敦: say 德国, 英国 or Europe/Berlin).
 */
import { createRequire } from 'node:module';
import { validateTimeZone, type TimeZone } from './time-zone.js';

const require = createRequire(import.meta.url);

const ZH_DIGITS: Readonly<Record<string, number>> = { 零: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10 };
const ZH_OFFSET_ZONE = /^(?<side>[东西])(?<n>[零一二两三四五六七八九十]{1,3}|\d{1,2})区$/;
const SAMPLE_INSTANTS = [Date.UTC(2026, 0, 15, 12), Date.UTC(2026, 6, 15, 12)];
type NameStyle = 'long' | 'longGeneric' | 'shortGeneric' | 'short';
/**
 * Locales and styles read per script of the name asked for. Abbreviations ("short") are regional:
 * CLDR gives PST/EST in en-US, BST/CET in en-GB, AEST in en-AU, IST in en-IN; Chinese has none.
 */
const NAME_SOURCES: Readonly<Record<'latin' | 'han', ReadonlyArray<readonly [string, readonly NameStyle[], RegExp?]>>> = {
  latin: [
    ['en-US', ['long', 'longGeneric', 'shortGeneric', 'short']],
    // (a region's abbreviations, read only for the zones they can name)
    ['en-GB', ['short'], /^(?:Europe|Atlantic|Africa)\//],
    ['en-AU', ['short'], /^(?:Australia|Antarctica|Pacific)\//],
    ['en-IN', ['short'], /^Asia\//],
  ],
  han: [['zh', ['long', 'longGeneric', 'shortGeneric']]],
};
const SUFFIXES = [/ (?:standard|daylight|summer) time$/, / time$/, /(?:标准|夏令|夏季)?时间$/];

/** The zone a person's name for it means, or undefined when the database knows no such name. */
export function zoneFromName(name: string): TimeZone | undefined {
  const text = name.normalize('NFKC').trim().replace(/\s+/g, ' ');
  if (text === '' || text.length > 64) return undefined;
  // The legacy fixed-offset ids EST, MST and HST are links to Panama, Phoenix and Honolulu; people
  // who say "EST" mean the zone CLDR names so (New York's), so abbreviations are looked up first.
  const abbreviation = /^[A-Za-z]{3,5}$/.test(text) ? nameIndex('latin').get(keyOf(text)) : undefined;
  if (abbreviation !== undefined) return abbreviation;
  const direct = tryZone(text) ?? tryZone(text.replace(/ /g, '_'));
  if (direct !== undefined) return direct;
  const offset = ZH_OFFSET_ZONE.exec(text);
  if (offset) return tryZone((offset.groups!.side === '东' ? 60 : -60) * zhNumber(offset.groups!.n!));
  const key = keyOf(text);
  const script = /\p{Script=Han}/u.test(key) ? 'han' : 'latin';
  return (
    (script === 'latin' ? cityIndex().get(key) : undefined) ??
    nameIndex(script).get(key) ??
    nameIndex(script).get(stripSuffix(key)) ??
    (script === 'han' ? (chinesePlaceZone(key) ?? chinesePlaceZone(stripSuffix(key))) : undefined)
  );
}

// Suffixes of administrative divisions ("上海市", "广东省", "广西壮族自治区", "朝阳区").
const DIVISION_SUFFIX = /(?:(?:壮族|回族|维吾尔)?自治区|特别行政区|自治州|自治县|地区|省|市|区|县|盟|旗)$/u;
// Regions of the division codes outside the mainland's zone (71 Taiwan, 81 Hong Kong, 82 Macau).
const DIVISION_REGIONS: Readonly<Record<string, string>> = { '71': 'TW', '81': 'HK', '82': 'MO' };
let chinesePlaces: ReadonlyMap<string, string> | undefined;

/** The zone of a place in the GB/T 2260 divisions ("上海", "深圳市", "香港"), or undefined. */
function chinesePlaceZone(name: string): string | undefined {
  if (!chinesePlaces) {
    const divisions = require('china-area-data/data.json') as Record<string, Record<string, string>>;
    const places = new Map<string, string>();
    const zoneOfRegion = new Map<string, string | undefined>();
    for (const children of Object.values(divisions)) {
      for (const [code, place] of Object.entries(children)) {
        const region = DIVISION_REGIONS[code.slice(0, 2)] ?? 'CN';
        if (!zoneOfRegion.has(region)) zoneOfRegion.set(region, mainZoneOf(region));
        const zone = zoneOfRegion.get(region);
        if (zone === undefined) continue;
        const bare = place.replace(DIVISION_SUFFIX, '');
        for (const key of [place, bare]) if (key.length >= 2 && !places.has(key)) places.set(key, zone);
      }
    }
    chinesePlaces = places;
  }
  return chinesePlaces.get(name) ?? chinesePlaces.get(name.replace(DIVISION_SUFFIX, ''));
}

/** A region's only zone, or the one CLDR names after the region ("China Time": Asia/Shanghai). */
function mainZoneOf(region: string): string | undefined {
  const zones = regionZones(region);
  if (zones.length <= 1) return zones[0] !== undefined ? canonical(zones[0]) : undefined;
  const name = new Intl.DisplayNames(['en'], { type: 'region' }).of(region);
  const main = zones.find((id) => new Intl.DateTimeFormat('en-US', { timeZone: id, timeZoneName: 'shortGeneric' }).formatToParts(0).find((p) => p.type === 'timeZoneName')?.value === `${name} Time`);
  return main !== undefined ? canonical(main) : undefined;
}

function regionZones(region: string): readonly string[] {
  try {
    const locale = new Intl.Locale(`und-${region}`) as Intl.Locale & { timeZones?: string[]; getTimeZones?: () => string[] };
    return locale.getTimeZones?.() ?? locale.timeZones ?? [];
  } catch {
    return [];
  }
}

function tryZone(zone: string | number): TimeZone | undefined {
  if (typeof zone === 'number' && !Number.isFinite(zone)) return undefined;
  try {
    return validateTimeZone(zone);
  } catch {
    return undefined;
  }
}

function zhNumber(n: string): number {
  if (/^\d+$/.test(n)) return Number(n);
  if (n === '十') return 10;
  if (n.startsWith('十')) return 10 + (ZH_DIGITS[n[1]!] ?? NaN);
  if (n.endsWith('十')) return (ZH_DIGITS[n[0]!] ?? NaN) * 10;
  return n.length === 1 ? (ZH_DIGITS[n] ?? NaN) : NaN;
}

const keyOf = (text: string) => text.toLowerCase().replace(/[_\s]+/g, ' ').replace(/^the /, '').trim();
const stripSuffix = (key: string) => SUFFIXES.reduce((k, suffix) => k.replace(suffix, ''), key);

// Built on first use and never changed after: the zone database does not change while a process
// runs. (Reading every zone's names takes a few hundred ms, once per script asked about.)
let cities: ReadonlyMap<string, string> | undefined;
const names = new Map<'latin' | 'han', ReadonlyMap<string, string>>();
let zoneCountries: ReadonlyMap<string, number> | undefined;

function zoneIds(): string[] {
  return typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
}

/** The runtime's canonical spelling of a zone id ("Asia/Kolkata" and "Asia/Calcutta" agree). */
function canonical(id: string): string {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: id }).resolvedOptions().timeZone;
  } catch {
    return id;
  }
}

/** "berlin" → Europe/Berlin, "new york" → America/New_York, "asia/shanghai" → Asia/Shanghai. */
function cityIndex(): ReadonlyMap<string, string> {
  if (cities) return cities;
  const candidates = new Map<string, string[]>();
  for (const id of zoneIds()) {
    const parts = id.split('/');
    for (const key of new Set([keyOf(id), keyOf(parts[parts.length - 1]!)])) push(candidates, key, id);
  }
  return (cities = settle(candidates));
}

/** CLDR's English or Chinese names of every zone (see the module comment). */
function nameIndex(script: 'latin' | 'han'): ReadonlyMap<string, string> {
  const known = names.get(script);
  if (known) return known;
  const candidates = new Map<string, string[]>();
  for (const id of zoneIds()) {
    for (const [locale, styles, zones] of NAME_SOURCES[script]) {
      if (zones && !zones.test(id)) continue;
      for (const style of styles) {
        let format: Intl.DateTimeFormat;
        try {
          format = new Intl.DateTimeFormat(locale, { timeZone: id, timeZoneName: style });
        } catch {
          continue;
        }
        for (const at of SAMPLE_INSTANTS) {
          const name = format.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
          // Offsets ("GMT+8") are read by validateTimeZone, not looked up.
          if (!name || /^(?:GMT|UTC)(?:[+-]|$)/.test(name)) continue;
          const key = keyOf(name);
          push(candidates, key, id);
          const bare = stripSuffix(key);
          if (bare !== key && bare !== '') push(candidates, bare, id);
        }
      }
    }
  }
  const index = settle(candidates);
  names.set(script, index);
  return index;
}

function push(map: Map<string, string[]>, key: string, id: string): void {
  const list = map.get(key);
  if (!list) map.set(key, [id]);
  else if (!list.includes(id)) list.push(id);
}

/** One zone per name: the only one, else the one of the country with the most zones, then the first id. */
function settle(candidates: ReadonlyMap<string, string[]>): Map<string, string> {
  const sizes = countryZoneCounts();
  const out = new Map<string, string>();
  for (const [key, ids] of candidates) {
    const best = [...ids].sort((a, b) => (sizes.get(b) ?? 0) - (sizes.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0))[0]!;
    out.set(key, best);
  }
  return out;
}

/** For each zone id, how many zones its country has (from `Intl.Locale#timeZones`). */
function countryZoneCounts(): ReadonlyMap<string, number> {
  if (zoneCountries) return zoneCountries;
  const counts = new Map<string, number>();
  const A = 'A'.charCodeAt(0);
  for (let i = 0; i < 26 * 26; i++) {
    const region = String.fromCharCode(A + Math.floor(i / 26), A + (i % 26));
    const zones = regionZones(region);
    for (const zone of zones) {
      const id = canonical(zone);
      counts.set(id, Math.max(counts.get(id) ?? 0, zones.length));
    }
  }
  return (zoneCountries = counts);
}
