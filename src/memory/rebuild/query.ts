/**
 * What the rebuilder reads out of the query: its search terms, the entities it names (people,
 * projects, task titles, calendar dates) and whether it asks about finished tasks.
 */
import { zonedParts, zonedTimeToInstant, type TimeZone } from '../../core/time-zone.js';
import { resolveDates } from '../../text/dates.js';
import type { SearchAnalyzer } from '../analyzer.js';
import type { Project, Task } from '../model.js';

/** The query, analysed once per rebuild. */
export interface QueryInfo {
  text: string;
  /** Distinct analyzer terms of the query. */
  terms: Set<string>;
  /** Lower-cased capitalised words that are not stopwords ("caroline"): likely names. */
  names: Set<string>;
  /** Ids of projects the query names. */
  projectIds: Set<string>;
  /** Whether the query asks about finished or cancelled tasks. */
  asksDone: boolean;
  /**
   * Calendar dates the query names ("on 13 October 2023", "in June"), as windows of when they
   * would have been talked about: from the day before to two weeks after, Unix ms.
   */
  dateWindows: Array<{ startMs: number; endMs: number }>;
  /**
   * `coverage` of each task title met so far by the query's terms: a rebuild checks every open
   * task's title (the record pool's `about`) and again the pooled ones (the tasks layer).
   */
  titleShares: Map<string, number>;
}

const DONE_CUES = /\b(done|finish(ed)?|complete[ds]?|closed|cancell?ed)\b|完成|做完|搞定|办完|结束了|取消/iu;
const CALENDAR_NAME = /^(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december|mon|tue|wed|thu|fri|sat|sun)(day)?$|^(tues|wednes|thurs|satur)day$/i;
const CAPITALISED = /\b[A-Z][\p{L}'’-]*\p{L}/gu;

const DAY_MS = 86_400_000;
// Only explicit calendar dates: relative phrases ("last year", "recently") resolve to spans that
// the memory's own timeline does not share.
const CALENDAR_WORD = /\d|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|[年月日号]/iu;
// What a query must contain for any part of it to pass CALENDAR_WORD (no word boundaries: a part
// may have one where the whole has none): without it, the date parser (~0.2 ms) need not run.
const MAY_HAVE_CALENDAR_WORD = /\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|[年月日号]/iu;

/** Analyses `query` against the user's projects, resolving dates at `nowMs` in `timeZone`. */
export function analyseQuery(query: string, analyzer: SearchAnalyzer, projects: readonly Project[], nowMs: number, timeZone: TimeZone): QueryInfo {
  const terms = new Set(analyzer(query));
  const names = new Set<string>();
  for (const match of query.matchAll(CAPITALISED)) {
    const word = match[0].replace(/['’]s$/u, '');
    // A capitalised stopword ("When", "I") yields no terms; months and weekdays are dates.
    if (analyzer(word).length > 0 && !CALENDAR_NAME.test(word)) names.add(word.toLowerCase());
  }
  const lower = query.toLowerCase();
  const projectIds = new Set<string>();
  for (const p of projects) {
    const name = p.name.trim().toLowerCase();
    if (name.length > 0 && (lower.includes(name) || coverage(analyzer(name), terms) === 1)) projectIds.add(p.id);
  }
  return { text: query, terms, names, projectIds, asksDone: asksAboutDone(query), dateWindows: dateWindows(query, nowMs, timeZone), titleShares: new Map() };
}

/** Whether `query` asks about finished or cancelled tasks (only then are closed tasks candidates). */
export function asksAboutDone(query: string): boolean {
  return DONE_CUES.test(query);
}

/** Windows around the calendar dates in `query`; a date without a year that lies ahead means last year's. */
function dateWindows(query: string, nowMs: number, timeZone: TimeZone): QueryInfo['dateWindows'] {
  const out: QueryInfo['dateWindows'] = [];
  if (!MAY_HAVE_CALENDAR_WORD.test(query)) return out;
  for (const m of resolveDates(query, { now: nowMs, timeZone })) {
    if (!CALENDAR_WORD.test(m.text) || m.grain === 'minute' || m.grain === 'hour') continue;
    let start = m.startMs;
    let end = m.endMs ?? m.startMs + DAY_MS;
    if (start > nowMs && !/\d{4}/.test(m.text)) {
      const shift = start - yearEarlier(start, timeZone);
      start -= shift;
      end -= shift;
    }
    out.push({ startMs: start - DAY_MS, endMs: end + 14 * DAY_MS });
  }
  return out;
}

function yearEarlier(ms: number, zone: TimeZone): number {
  const p = zonedParts(ms, zone);
  return zonedTimeToInstant({ year: p.year - 1, month: p.month, day: p.day, hour: p.hour, minute: p.minute }, zone);
}

/** Whether `atMs` falls in one of the query's date windows. */
export function inDateWindow(atMs: number, query: QueryInfo): boolean {
  return query.dateWindows.some((w) => atMs >= w.startMs && atMs < w.endMs);
}

/** Share (0..1) of the distinct `itemTerms` that occur in `queryTerms`; 0 for no terms. */
export function coverage(itemTerms: readonly string[], queryTerms: ReadonlySet<string>): number {
  if (itemTerms.length > 32) {
    const distinct = new Set(itemTerms);
    let hit = 0;
    for (const t of distinct) if (queryTerms.has(t)) hit++;
    return hit / distinct.size;
  }
  // Task titles are a few terms: a scan for repeats is cheaper than a Set per task per rebuild.
  let distinct = 0;
  let hit = 0;
  for (let i = 0; i < itemTerms.length; i++) {
    const t = itemTerms[i]!;
    if (itemTerms.indexOf(t) !== i) continue;
    distinct++;
    if (queryTerms.has(t)) hit++;
  }
  return distinct === 0 ? 0 : hit / distinct;
}

/** How strongly the query is about `task` (0..1): the share of its title's terms the query uses, or 1 when it names its project. */
export function taskMention(task: Pick<Task, 'title' | 'projectId'>, query: QueryInfo, analyzer: SearchAnalyzer): number {
  let share = query.titleShares.get(task.title);
  if (share === undefined) query.titleShares.set(task.title, (share = coverage(analyzer(task.title), query.terms)));
  const inProject = task.projectId !== null && query.projectIds.has(task.projectId) ? 0.5 : 0;
  return Math.max(share, inProject);
}

/** Share (0..1) of the query's entities a record has: names its text mentions, date windows its time falls in. */
export function entityMatch(text: string, atMs: number, query: QueryInfo): number {
  const dates = query.dateWindows.length > 0 ? 1 : 0;
  const total = query.names.size + dates;
  if (total === 0) return 0;
  const lower = text.toLowerCase();
  let hit = dates && inDateWindow(atMs, query) ? 1 : 0;
  for (const name of query.names) if (lower.includes(name)) hit++;
  return hit / total;
}
