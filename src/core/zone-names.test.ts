import { describe, expect, it } from 'vitest';
import { offsetMinutesAt } from './time-zone.js';
import { zoneFromName } from './zone-names.js';

const JAN = Date.UTC(2026, 0, 15, 12);
const JUL = Date.UTC(2026, 6, 15, 12);
/** Offsets in January and July: what a zone means on the clock. */
const clockOf = (zone: string | number | undefined) => (zone === undefined ? undefined : [offsetMinutesAt(zone, JAN), offsetMinutesAt(zone, JUL)]);

describe('zoneFromName', () => {
  it('reads zone ids and offsets as they are written', () => {
    expect(zoneFromName('Asia/Shanghai')).toBe('Asia/Shanghai');
    expect(zoneFromName('america/new_york')).toBe('America/New_York');
    expect(zoneFromName('UTC+8')).toBe(480);
    expect(zoneFromName('+05:30')).toBe(330);
    expect(zoneFromName('东八区')).toBe(480);
    expect(zoneFromName('西五区')).toBe(-300);
    expect(zoneFromName('东十二区')).toBe(720);
  });

  it('finds the zone of a city named in its id', () => {
    expect(zoneFromName('Berlin')).toBe('Europe/Berlin');
    expect(zoneFromName('new york')).toBe('America/New_York');
    expect(zoneFromName('Buenos Aires')).toMatch(/Buenos_Aires$/);
  });

  it('reads CLDR names: abbreviations, metazones, countries and cities, in English and Chinese', () => {
    // (zones sharing a name in one country keep one clock: compared by offsets)
    expect(clockOf(zoneFromName('PST'))).toEqual([-480, -420]);
    expect(clockOf(zoneFromName('EST'))).toEqual([-300, -240]);
    expect(clockOf(zoneFromName('Pacific Time'))).toEqual([-480, -420]);
    expect(clockOf(zoneFromName('Central European Time'))).toEqual([60, 120]);
    expect(clockOf(zoneFromName('AEST'))).toEqual([660, 600]);
    expect(zoneFromName('Japan')).toBe('Asia/Tokyo');
    expect(zoneFromName('日本')).toBe('Asia/Tokyo');
    expect(zoneFromName('德国')).toBe('Europe/Berlin');
    expect(zoneFromName('纽约')).toBe('America/New_York');
    expect(zoneFromName('香港')).toBe('Asia/Hong_Kong');
    expect(clockOf(zoneFromName('北美东部时间'))).toEqual([-300, -240]);
  });

  it('places Chinese divisions in their region’s zone', () => {
    for (const place of ['上海', '北京', '深圳市', '广东省', '中国', '北京时间']) expect(zoneFromName(place), place).toBe('Asia/Shanghai');
    expect(zoneFromName('台北市')).toBe('Asia/Taipei');
    expect(zoneFromName('香港特别行政区')).toBe('Asia/Hong_Kong');
  });

  it('knows nothing of activities and common words', () => {
    for (const text of ['a meeting', 'the office', '开会', '我家', '', 'x'.repeat(80), '东九十九区']) expect(zoneFromName(text), text).toBeUndefined();
  });
});
