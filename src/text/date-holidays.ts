/**
 * Holidays as date rules: fixed days (元旦, Christmas Eve), the n-th weekday of a month
 * (Thanksgiving, Memorial Day), days counted from Easter (Western and Orthodox), the Chinese
 * lunisolar calendar and its solar terms (春节, 除夕, 中秋, 清明), the Hebrew and Islamic
 * calendars (Yom Kippur, Eid al-Fitr) and the Hindu lunisolar calendar (date-hindu.ts). The
 * table names each holiday once, with the words people use for it in both languages; the
 * calendars compute the day for any year.
 *
 * Which year: a year given ("Thanksgiving 2016", "2018年逾越节") or counted ("of next year",
 * "in 3 years", "明年") picks that year's; "last X" the most recent one before today; otherwise
 * the next one on or after today (one still under way counts: Ramadan during Ramadan). Before a
 * holiday ("国庆节前", "before Christmas") is the working day's end the day before it.
 *
 * Convention: a Jewish holiday begins at sundown, so it resolves to the civil day on whose
 * evening it begins (Yom Kippur 2018 → September 18), as Duckling does. Islamic days are taken
 * as the civil day they mostly cover.
 */
import { addDays, compareDates, dayMention, daysInMonth, startOfDate, timeMention, weekdayOf } from './date-calendar.js';
import type { CivilDate, DateContext, DateRule, ResolvedDate } from './date-calendar.js';
import { hinduFestival } from './date-hindu.js';
import type { HinduFestival } from './date-hindu.js';
import { chineseLunarDate, hebrewDate, islamicDate, orthodoxEaster, solarTerm, westernEaster } from './date-world-calendars.js';
import type { HebrewMonth } from './date-world-calendars.js';

/** One occurrence: its first day and how many days it lasts (1 unless a period, like Lent). */
interface Occurrence {
  start: CivilDate;
  days?: number;
  /** A time of day it starts at (Earth Hour), with its length in minutes. */
  time?: { hour: number; minute: number; minutes: number };
}
type OnYear = (year: number) => Occurrence | undefined;

interface Holiday {
  /** Words for it in English, lower case; an apostrophe may be left out, spaces may be hyphens. */
  en: readonly string[];
  /** Words for it in Simplified Chinese (Traditional is converted before matching). */
  zh: readonly string[];
  on: OnYear;
  /** Its English name is also a common word ("lent"): read capitalised or with a year ("lent 2018"), never before an object ("Lent me"). */
  verbLike?: boolean;
}

const day = (start: CivilDate | undefined): Occurrence | undefined => (start ? { start } : undefined);
const fixed = (month: number, dom: number): OnYear => (year) => ({ start: { year, month, day: dom } });
/** The `n`-th `weekday` (0 Sunday) of `month`; n = -1 is the last. */
function nthWeekday(year: number, month: number, weekday: number, n: number): CivilDate {
  if (n > 0) {
    const first = { year, month, day: 1 };
    return addDays(first, ((weekday - weekdayOf(first) + 7) % 7) + 7 * (n - 1));
  }
  const last = { year, month, day: daysInMonth(year, month) };
  return addDays(last, -((weekdayOf(last) - weekday + 7) % 7));
}
const nth = (month: number, weekday: number, n: number, plus = 0): OnYear => (year) => ({ start: addDays(nthWeekday(year, month, weekday, n), plus) });
const easter = (offset: number, days?: number): OnYear => (year) => ({ start: addDays(westernEaster(year), offset), days });
const orthodox = (offset: number, days?: number): OnYear => (year) => ({ start: addDays(orthodoxEaster(year), offset), days });
const lunar = (month: number, dom: number): OnYear => (year) => ({ start: chineseLunarDate(month === 12 ? year - 1 : year, month, dom) });
const term = (name: string): OnYear => (year) => day(solarTerm(name, year));
/** A Jewish holiday: the civil day on whose evening it begins, and how many days it spans from then. */
const hebrew = (month: HebrewMonth, dom: number, days?: number, move?: (date: CivilDate) => CivilDate): OnYear => (year) => {
  // The evening before can fall in the previous year (a holiday on January 1), so look one day on.
  const date = hebrewDate(year, month, dom) ?? hebrewDate(year + 1, month, dom);
  if (!date) return undefined;
  return { start: addDays(move ? move(date) : date, -1), days };
};
const islamic = (month: number, dom: number, days?: (year: number, start: CivilDate) => number): OnYear => (year) => {
  const start = islamicDate(year, month, dom);
  return start ? { start, days: days?.(year, start) } : undefined;
};
const hindu = (festival: HinduFestival, plus = 0): OnYear => (year) => {
  const start = hinduFestival(festival, year);
  return start ? { start: addDays(start, plus) } : undefined;
};

/** Sat → Friday, Sun → Monday: how a fixed day is observed when it falls on a weekend. */
const nearestWeekday = (date: CivilDate) => addDays(date, weekdayOf(date) === 6 ? -1 : weekdayOf(date) === 0 ? 1 : 0);

const HOLIDAYS: readonly Holiday[] = [
  // Fixed days.
  { en: ["new year's day", 'new year'], zh: ['元旦', '元旦节'], on: fixed(1, 1) },
  { en: ["new year's eve"], zh: ['跨年夜'], on: fixed(12, 31) },
  { en: ["valentine's day", 'valentine day', "st valentine's day", "saint valentine's day"], zh: ['情人节', '圣瓦伦丁节', '西洋情人节'], on: fixed(2, 14) },
  { en: ["women's day", "international women's day"], zh: ['妇女节', '国际妇女节', '三八妇女节', '三八节'], on: fixed(3, 8) },
  { en: ["april fools' day", "april fool's day", "april fools"], zh: ['愚人节'], on: fixed(4, 1) },
  { en: ["st. patrick's day", "st patrick's day", "saint patrick's day"], zh: ['圣帕特里克节'], on: fixed(3, 17) },
  { en: ['may day', "international workers' day"], zh: ['劳动节', '五一劳动节', '国际劳动节', '五一节'], on: fixed(5, 1) },
  { en: [], zh: ['青年节', '五四青年节'], on: fixed(5, 4) },
  { en: ["children's day", "international children's day"], zh: ['儿童节', '国际儿童节', '六一儿童节'], on: fixed(6, 1) },
  { en: ['independence day', 'fourth of july', '4th of july'], zh: ['美国独立日'], on: fixed(7, 4) },
  { en: [], zh: ['建军节'], on: fixed(8, 1) },
  { en: ["teachers' day"], zh: ['教师节'], on: fixed(9, 10) },
  { en: ['chinese national day', 'national day of china'], zh: ['国庆节', '国庆'], on: fixed(10, 1) },
  { en: ['halloween', "all hallows' eve"], zh: ['万圣节', '万圣夜', '万圣节前夜'], on: fixed(10, 31) },
  { en: ["all saints' day"], zh: ['诸圣节'], on: fixed(11, 1) },
  { en: ['veterans day', 'remembrance day', 'armistice day'], zh: ['退伍军人节'], on: fixed(11, 11) },
  { en: ['christmas eve', 'xmas eve'], zh: ['平安夜', '圣诞夜', '圣诞前夜'], on: fixed(12, 24) },
  { en: ['christmas day', 'christmas', 'xmas', 'x-mas'], zh: ['圣诞节', '圣诞'], on: fixed(12, 25) },
  { en: ['boxing day'], zh: ['节礼日'], on: fixed(12, 26) },
  { en: ["king's day", 'koningsdag'], zh: ['国王节'], on: (year) => ({ start: ((d) => (weekdayOf(d) === 0 ? addDays(d, -1) : d))({ year, month: 4, day: 27 }) }) },
  { en: ["boss's day", "bosses' day", 'boss day', 'national boss day'], zh: ['老板节'], on: (year) => ({ start: nearestWeekday({ year, month: 10, day: 16 }) }) },
  {
    en: ['earth hour'],
    zh: ['地球一小时'],
    on: (year) => ({ start: nthWeekday(year, 3, 6, -1), time: { hour: 20, minute: 30, minutes: 60 } }),
  },
  // The n-th weekday of a month (United States unless named otherwise).
  { en: ['martin luther king day', "martin luther king's day", 'martin luther king jr day', 'mlk day', 'mlk jr day', 'civil rights day'], zh: ['马丁路德金纪念日'], on: nth(1, 1, 3) },
  { en: ["presidents' day", "washington's birthday"], zh: ['总统日'], on: nth(2, 1, 3) },
  { en: ["mother's day"], zh: ['母亲节'], on: nth(5, 0, 2) },
  { en: ['memorial day', 'decoration day'], zh: ['阵亡将士纪念日'], on: nth(5, 1, -1) },
  { en: ["father's day"], zh: ['父亲节'], on: nth(6, 0, 3) },
  { en: ['labor day', 'labour day'], zh: ['美国劳动节'], on: nth(9, 1, 1) },
  { en: ['columbus day', "indigenous peoples' day"], zh: ['哥伦布日'], on: nth(10, 1, 2) },
  { en: ['thanksgiving day', 'thanksgiving'], zh: ['感恩节'], on: nth(11, 4, 4) },
  { en: ['black friday'], zh: ['黑色星期五'], on: nth(11, 4, 4, 1) },
  { en: ['cyber monday'], zh: ['网络星期一'], on: nth(11, 4, 4, 4) },
  // Counted from Easter.
  { en: ['easter sunday', 'easter day', 'easter'], zh: ['复活节', '主复活日', '复活节主日'], on: easter(0) },
  { en: ['easter monday', 'easter mon'], zh: ['复活节星期一'], on: easter(1) },
  { en: ['holy saturday'], zh: ['圣周六', '复活节前夜'], on: easter(-1) },
  { en: ['good friday', 'holy friday', 'great friday'], zh: ['耶稣受难日', '受难节'], on: easter(-2) },
  { en: ['maundy thursday', 'holy thursday'], zh: ['濯足节'], on: easter(-3) },
  { en: ['palm sunday', 'branch sunday'], zh: ['棕枝主日', '圣枝主日'], on: easter(-7) },
  { en: ['ash wednesday'], zh: ['圣灰星期三', '大斋首日'], on: easter(-46) },
  { en: ['shrove tuesday', 'pancake day', 'mardi gras', 'fat tuesday'], zh: ['忏悔星期二', '煎饼节'], on: easter(-47) },
  { en: ['ascension day', 'feast of the ascension'], zh: ['耶稣升天节', '升天节'], on: easter(39) },
  { en: ['pentecost', 'whit sunday', 'whitsunday', 'white sunday', 'whitsun'], zh: ['五旬节', '圣灵降临节', '圣灵降临日'], on: easter(49) },
  { en: ['whit monday'], zh: ['圣灵降临节星期一'], on: easter(50) },
  { en: ['trinity sunday'], zh: ['圣三一主日', '天主三一主日', '天主圣三一节', '圣三主日', '圣三节'], on: easter(56) },
  { en: ['corpus christi'], zh: ['基督圣体节'], on: easter(60) },
  { en: ['lent'], zh: ['大斋期', '大斋节', '四旬期'], on: easter(-46, 46), verbLike: true },
  // Orthodox, counted from Orthodox Easter.
  { en: ['orthodox easter', 'orthodox easter sunday', 'pascha'], zh: ['东正教复活节'], on: orthodox(0) },
  { en: ['orthodox good friday', 'orthodox great friday', 'orthodox holy friday'], zh: ['东正教耶稣受难日', '东正教受难节'], on: orthodox(-2) },
  { en: ['orthodox holy saturday', 'orthodox great saturday'], zh: ['东正教圣周六', '东正教神圣周六', '东正教耶稣受难日翌日', '东正教主受难节翌日', '东正教复活节前夜'], on: orthodox(-1) },
  { en: ['orthodox palm sunday'], zh: ['东正教棕枝主日', '东正教圣枝主日', '东正教圣树主日', '东正教基督苦难主日'], on: orthodox(-7) },
  { en: ['lazarus saturday'], zh: ['拉撒路星期六'], on: orthodox(-8) },
  { en: ['clean monday', 'orthodox ash monday'], zh: ['东正教圣灰星期一'], on: orthodox(-48) },
  { en: ['great lent', 'orthodox lent'], zh: ['四旬节', '东正教大斋期'], on: orthodox(-48, 40) },
  // The Chinese lunisolar calendar and its solar terms.
  {
    en: ['chinese new year', "chinese new year's", 'chinese new years', 'chinese lunar new year', "chinese lunar new year's day", 'lunar new year', 'spring festival'],
    zh: ['春节', '农历新年', '新春', '大年初一', '正月初一', '正月正时', '正月朔日', '年初一'],
    on: lunar(1, 1),
  },
  { en: ["chinese new year's eve", "lunar new year's eve"], zh: ['除夕', '大年三十', '年三十', '大年夜', '除夕夜'], on: (year) => ({ start: addDays(chineseLunarDate(year, 1, 1), -1) }) },
  { en: ['lantern festival'], zh: ['元宵节', '元宵', '上元节'], on: lunar(1, 15) },
  { en: ['dragon boat festival', 'duanwu festival'], zh: ['端午节', '端午', '端阳节'], on: lunar(5, 5) },
  { en: ['qixi festival', 'double seventh festival', "chinese valentine's day"], zh: ['七夕节', '七夕', '乞巧节'], on: lunar(7, 7) },
  { en: ['ghost festival', 'hungry ghost festival'], zh: ['中元节', '盂兰盆节', '鬼节'], on: lunar(7, 15) },
  { en: ['mid-autumn festival', 'moon festival', 'mooncake festival'], zh: ['中秋节', '中秋'], on: lunar(8, 15) },
  { en: ['double ninth festival', 'chongyang festival'], zh: ['重阳节', '重阳', '重九'], on: lunar(9, 9) },
  { en: ['laba festival'], zh: ['腊八节', '腊八'], on: lunar(12, 8) },
  { en: ['qingming festival', 'tomb-sweeping day', 'tomb sweeping festival'], zh: ['清明节', '清明'], on: term('清明') },
  { en: ['dongzhi festival'], zh: ['冬至'], on: term('冬至') },
  // The Hebrew calendar (from the evening before; the length counts from that evening).
  { en: ['rosh hashanah', 'rosh hashana', 'jewish new year'], zh: ['犹太新年', '犹太历新年'], on: hebrew('Tishri', 1, 3) },
  { en: ['yom kippur', 'day of atonement'], zh: ['赎罪日'], on: hebrew('Tishri', 10) },
  { en: ['sukkot', 'succot', 'succos', 'sukkos', 'feast of tabernacles', 'feast of booths', 'feast of the ingathering'], zh: ['住棚节', '结茅节'], on: hebrew('Tishri', 15, 9) },
  { en: ['shemini atzeret', 'shmini atzeret'], zh: ['圣会节'], on: hebrew('Tishri', 22) },
  {
    en: ['simchat torah', 'simchas torah', 'simhat torah'],
    zh: ['西赫托拉节', '西赫妥拉节', '诵经节', '转经节', '律法节', '欢庆圣法节', '西赫妥拉'],
    on: hebrew('Tishri', 23),
  },
  { en: ['hanukkah', 'chanukah', 'hanukah', 'hannukkah', 'chanukkah', 'hanukka', 'hannukah'], zh: ['光明节', '修殿节', '哈努卡节'], on: hebrew('Kislev', 25, 8) },
  { en: ['tu bishvat', "tu b'shvat", "tu b'shevat", 'tu bishevat'], zh: ['犹太植树节', '图比舍巴特节', '树木新年'], on: hebrew('Shevat', 15) },
  { en: ['purim'], zh: ['普珥节', '普林节'], on: hebrew('Adar', 14) },
  { en: ['shushan purim'], zh: ['书珊普珥节'], on: hebrew('Adar', 15) },
  { en: ['passover', 'pesach', 'pesah'], zh: ['逾越节'], on: hebrew('Nisan', 15, 9) },
  // Yom HaShoah moves off Friday to Thursday and off Sunday to Monday; Yom Ha'atzmaut off
  // Friday and Saturday to Thursday, and off Monday to Tuesday (Israeli law).
  {
    en: ['yom hashoah', 'holocaust day', 'holocaust remembrance day'],
    zh: ['大屠杀纪念日'],
    on: hebrew('Nisan', 27, undefined, (d) => addDays(d, weekdayOf(d) === 5 ? -1 : weekdayOf(d) === 0 ? 1 : 0)),
  },
  {
    en: ["yom ha'atzmaut", 'yom haatzmaut', 'israel independence day', "israel's independence day"],
    zh: ['以色列独立日', '以色列国庆节'],
    on: hebrew('Iyar', 5, undefined, (d) => addDays(d, weekdayOf(d) === 5 ? -1 : weekdayOf(d) === 6 ? -2 : weekdayOf(d) === 1 ? 1 : 0)),
  },
  { en: ['lag baomer', "lag b'omer"], zh: ['篝火节'], on: hebrew('Iyar', 18) },
  { en: ['shavuot', 'shavuos'], zh: ['七七节', '五旬节犹太'], on: hebrew('Sivan', 6) },
  { en: ["tisha b'av", 'tisha bav'], zh: ['圣殿被毁日'], on: hebrew('Av', 9) },
  // The Islamic calendar.
  { en: ['islamic new year', 'hijri new year', 'arabic new year', 'amun jadid'], zh: ['伊斯兰新年', '伊斯兰教新年', '伊斯兰历新年', '回历新年'], on: islamic(1, 1) },
  { en: ['ashura', 'day of ashura'], zh: ['阿舒拉节'], on: islamic(1, 10) },
  { en: ['mawlid', 'mawlid al-nabawi', 'mawlid an-nabi', 'milad un-nabi', "prophet's birthday"], zh: ['圣纪节', '圣纪'], on: islamic(3, 12) },
  { en: ["isra and mi'raj", 'isra and miraj', 'the night journey', 'night journey', 'ascension to heaven', "lailat al mi'raj"], zh: ['登霄节'], on: islamic(7, 27) },
  { en: ['ramadan', 'ramazan'], zh: ['斋月', '莱麦丹月'], on: islamic(9, 1, (year, start) => ramadanDays(year, start)) },
  { en: ['laylat al-qadr', 'laylat al kadr', 'laylat al-kadr', 'lailat al-qadr', 'night of power', 'night of decree', 'night of measures'], zh: ['法令之夜', '权力之夜', '盖德尔夜'], on: islamic(9, 27) },
  { en: ["jumu'atul-wida", 'jamat ul-vida', 'jumuatul wida', "jumu'ah al-wida"], zh: ['告别主麻'], on: (year) => day(lastFridayOfRamadan(year)) },
  { en: ['eid al-fitr', 'eid ul-fitr', 'id ul-fitr', 'eid al fitr'], zh: ['开斋节', '肉孜节', '尔代节'], on: islamic(10, 1) },
  { en: ['eid al-adha', 'eid ul-adha', 'id ul-adha', 'sacrifice feast', 'feast of sacrifice', 'bakr id', 'bakrid', 'kurban bayram'], zh: ['古尔邦节', '宰牲节'], on: islamic(12, 10) },
  // The Hindu lunisolar and sidereal solar calendars (date-hindu.ts).
  { en: ['diwali', 'deepavali', 'lakshmi puja', 'divali'], zh: ['排灯节', '万灯节', '印度灯节', '屠妖节'], on: hindu('diwali') },
  { en: ['dhanteras', 'dhanatrayodashi'], zh: ['财富节'], on: hindu('dhanteras') },
  { en: ['chhath', 'dala puja', 'surya shashthi', 'chhath puja'], zh: ['太阳神节'], on: hindu('chhath') },
  { en: ['dussehra', 'vijayadashami', 'dasara'], zh: ['十胜节', '十胜日'], on: hindu('dussehra') },
  { en: ['karva chauth', 'karwa chauth'], zh: ['卡瓦乔斋节'], on: hindu('karvaChauth') },
  { en: ['raksha bandhan', 'rakhi'], zh: ['拉吉节', '兄妹节'], on: hindu('rakshaBandhan') },
  { en: ['maha shivaratri', 'mahashivratri', 'maha shivratri'], zh: ['湿婆节', '湿婆之夜'], on: hindu('mahaShivaratri') },
  { en: ['ganesh chaturthi', 'vinayaka chaturthi'], zh: ['象头神节'], on: hindu('ganeshChaturthi') },
  { en: ['holika dahan', 'chhoti holi', 'kamudu pyre'], zh: ['小洒红节'], on: hindu('holikaDahan') },
  { en: ['holi', 'dhulandi', 'phagwah', 'dhuleti'], zh: ['侯丽节', '荷丽节', '荷丽', '洒红节', '欢悦节', '五彩节', '胡里节', '好利节', '霍利节', '灑红节'], on: hindu('holi') },
  { en: ['ugadi', 'yugadi', 'samvatsaradi', 'chaitra sukladi', 'chaitra sukhladi', 'gudi padwa'], zh: ['乌加迪节'], on: hindu('ugadi') },
  { en: ['vesak', 'vaisakha', 'buddha day', 'buddha purnima', 'buddha jayanti'], zh: ['卫塞节', '佛诞节'], on: hindu('vesak') },
  { en: ['guru ravidas jayanti', 'guru ravidass jayanti', 'guru ravidass birthday', 'guru ravidas birthday'], zh: [], on: hindu('ravidasJayanti') },
  { en: ['valmiki jayanti', 'pargat diwas'], zh: [], on: hindu('valmikiJayanti') },
  { en: ['thai pongal', 'pongal', 'makara sankranthi', 'makar sankranti', 'makara sankranti', 'maghi'], zh: ['庞格尔节', '丰收节', '印度丰收节', '庞格尔节第二天', '印度丰收节第二天'], on: hindu('pongal') },
  { en: ['bhogi', 'bhogi pongal'], zh: ['庞格尔节第一天', '印度丰收节第一天'], on: hindu('pongal', -1) },
  { en: ['mattu pongal', 'maattu pongal'], zh: ['庞格尔节第三天', '印度丰收节第三天'], on: hindu('pongal', 1) },
  { en: ['kaanum pongal', 'kanum pongal'], zh: ['庞格尔节第四天', '印度丰收节第四天'], on: hindu('pongal', 2) },
  { en: ['onam', 'thiru onam', 'thiruvonam'], zh: ['欧南节', '奥南节'], on: hindu('onam') },
  { en: ['rabindra jayanti', 'rabindranath jayanti'], zh: ['泰戈尔诞辰'], on: hindu('rabindraJayanti') },
  { en: ['parsi new year', 'jamshedi navroz', 'navroz', 'pateti'], zh: ['帕西新年'], on: (year) => ({ start: parsiNewYear(year) }) },
];

/** Ramadan lasts until Eid al-Fitr. */
function ramadanDays(year: number, start: CivilDate): number {
  const eid = islamicDate(year, 10, 1) ?? islamicDate(year + 1, 10, 1);
  if (!eid) return 30;
  return Math.round((Date.UTC(eid.year, eid.month - 1, eid.day) - Date.UTC(start.year, start.month - 1, start.day)) / 86_400_000);
}

function lastFridayOfRamadan(year: number): CivilDate | undefined {
  const eid = islamicDate(year, 10, 1);
  if (!eid) return undefined;
  const before = addDays(eid, -1);
  return addDays(before, -((weekdayOf(before) - 5 + 7) % 7));
}

/**
 * Navroz of the Shahenshahi Parsi calendar: a year of exactly 365 days without leap days, so it
 * moves a day earlier in the Gregorian calendar every four years or so. Counted from 1 Farvardin
 * 1392 YZ, which was 16 August 2022.
 */
function parsiNewYear(year: number): CivilDate {
  const anchor = Date.UTC(2022, 7, 16);
  const jan1 = Date.UTC(year, 0, 1);
  const years = Math.ceil((jan1 - anchor) / (365 * 86_400_000));
  const d = new Date(anchor + years * 365 * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
};
const COUNT = `(?:\\d{1,2}|${Object.keys(NUMBER_WORDS).join('|')})`;
const count = (text: string | undefined) => (text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : NUMBER_WORDS[text.toLowerCase()]);

function aliasPattern(alias: string): string {
  return alias
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/'/g, "['’]?")
    .replace(/\\\./g, '\\.?')
    .replace(/-/g, '[\\s-]?')
    .replace(/ /g, '[\\s-]+');
}
const byLength = (a: string, b: string) => b.length - a.length;

// After a name that is also a verb ("Lent"), an object means the verb: "Lent me your pen".
const OBJECT_NOT_AFTER = '(?!\\s+(?:me|him|her|us|them|you|it|my|his|our|their|your|a|an|the|this|that|out|to|money)\\b)';

function holidayIndex(lang: 'en' | 'zh'): { pattern: string; find: (name: string) => Holiday | undefined } {
  const entries: Array<[string, Holiday]> = [];
  for (const h of HOLIDAYS) for (const name of h[lang]) entries.push([name, h]);
  entries.sort((a, b) => byLength(a[0], b[0]));
  const compiled = entries.map(([name, h]) => [new RegExp(`^${aliasPattern(name)}$`, 'iu'), h] as const);
  return {
    pattern: entries.map(([name, h]) => aliasPattern(name) + (h.verbLike ? OBJECT_NOT_AFTER : '')).join('|'),
    find: (name) => compiled.find(([re]) => re.test(name))?.[1],
  };
}

const EN = holidayIndex('en');
const ZH = holidayIndex('zh');
const ZH_YEAR_OFFSETS: Readonly<Record<string, number>> = { 今年: 0, 明年: 1, 去年: -1, 后年: 2, 前年: -2 };

// Occurrences computed, by holiday and year: the calendars behind them (the Hindu ones above all)
// are costly, and a conversation names the same holidays again. Bounded; a pure function's cache.
const OCCURRENCES_KEPT = 256;
const occurrences = new Map<string, Occurrence | null>();

function occurrence(holiday: Holiday, year: number): Occurrence | undefined {
  const key = `${HOLIDAYS.indexOf(holiday)}|${year}`;
  let found = occurrences.get(key);
  if (found === undefined) {
    found = holiday.on(year) ?? null;
    if (occurrences.size >= OCCURRENCES_KEPT) occurrences.delete(occurrences.keys().next().value!);
    occurrences.set(key, found);
  }
  return found ?? undefined;
}

/** The occurrence of `holiday` the phrase means (see the module comment), as a mention. */
function resolveHoliday(holiday: Holiday, ctx: DateContext, pick: { year?: number; last?: boolean; before?: boolean }): ResolvedDate | undefined {
  let found: Occurrence | undefined;
  if (pick.year !== undefined) {
    found = occurrence(holiday, pick.year);
  } else {
    const endOf = (o: Occurrence) => addDays(o.start, o.days ?? 1);
    const candidates = [-1, 0, 1, 2].map((k) => occurrence(holiday, ctx.today.year + k)).filter((o): o is Occurrence => o !== undefined);
    found = pick.last
      ? candidates.filter((o) => compareDates(o.start, ctx.today) < 0).pop()
      : candidates.find((o) => compareDates(endOf(o), ctx.today) > 0);
  }
  if (!found) return undefined;
  const { start, days, time } = found;
  // "国庆节前", "before Christmas": by the end of the working day before it.
  if (pick.before) return { ...timeMention(ctx, addDays(start, -1), ctx.workdayEnd), grain: 'day' };
  if (time) {
    const startMs = startOfDate(ctx, start) + (time.hour * 60 + time.minute) * 60_000;
    return { startMs, endMs: startMs + time.minutes * 60_000, hasTime: true, grain: 'minute' };
  }
  const mention = dayMention(ctx, start);
  return days !== undefined && days > 1 ? { ...mention, endMs: startOfDate(ctx, addDays(start, days)) } : mention;
}

function parseZhYear(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  return Number([...text].map((c) => (c === '零' ? 0 : '〇一二三四五六七八九'.indexOf(c))).join(''));
}

/** Holiday rules, English and Chinese. */
export const HOLIDAY_DATE_RULES: readonly DateRule[] = [
  {
    name: 'en.holiday',
    pattern: new RegExp(
      `\\b(?:(?<before>before|by)\\s+)?(?:(?<mod>next|last|this|the|upcoming|coming|previous|past)\\s+)?(?<name>${EN.pattern})` +
        `(?:\\s+(?:(?:of\\s+)?(?<rel>next|last|this)\\s+year|(?:in\\s+)?(?<year>\\d{4})(?!\\d)|in\\s+(?<in>${COUNT})\\s+years?|(?<n>${COUNT})\\s+years?\\s+(?<dir>hence|from\\s+now|later|ago)))?\\b`,
      'giu',
    ),
    resolve(g, ctx) {
      const holiday = EN.find(g.name ?? '');
      const yearGiven = g.year !== undefined || g.rel !== undefined || g.in !== undefined || g.n !== undefined;
      if (!holiday || (holiday.verbLike && !yearGiven && !/^[A-Z][a-z]/.test(g.name ?? ''))) return undefined;
      const rel = g.rel?.toLowerCase();
      let year: number | undefined;
      if (g.year !== undefined) year = Number(g.year);
      else if (rel !== undefined) year = ctx.today.year + (rel === 'next' ? 1 : rel === 'last' ? -1 : 0);
      else if (g.in !== undefined) year = ctx.today.year + (count(g.in) ?? 0);
      else if (g.n !== undefined) year = ctx.today.year + (count(g.n) ?? 0) * (g.dir?.toLowerCase() === 'ago' ? -1 : 1);
      const mod = g.mod?.toLowerCase();
      return resolveHoliday(holiday, ctx, { year, last: mod === 'last' || mod === 'previous' || mod === 'past', before: g.before !== undefined });
    },
  },
  {
    name: 'zh.holiday',
    pattern: new RegExp(`(?:(?<year>\\d{4}|[零〇一二三四五六七八九]{4})年|(?<ymod>今年|明年|去年|后年|前年)|(?<mod>上个?|下个?))?的?(?<name>${ZH.pattern})(?<before>前|之前|以前)?`, 'gu'),
    resolve(g, ctx) {
      const holiday = ZH.find(g.name ?? '');
      if (!holiday) return undefined;
      const year = g.year !== undefined ? parseZhYear(g.year) : g.ymod !== undefined ? ctx.today.year + (ZH_YEAR_OFFSETS[g.ymod] ?? 0) : undefined;
      return resolveHoliday(holiday, ctx, { year, last: g.mod?.startsWith('上'), before: g.before !== undefined });
    },
  },
];
