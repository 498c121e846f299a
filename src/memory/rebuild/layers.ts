/**
 * Candidates of the record layers: system, profile, project (stable: nothing here may depend on
 * the query, the clock or access counts), tasks and other memories (volatile).
 */
import type { SearchAnalyzer } from '../analyzer.js';
import { isOpenStatus, type Decision, type Fact, type Project, type Task } from '../model.js';
import { leadOf } from './compress.js';
import type { ResolvedRebuildOptions } from './options.js';
import type { PackCandidate } from './pack.js';
import { entityMatch, taskMention, type QueryInfo } from './query.js';
import { formatLocalDate as formatDate, formatLocalTime as formatDateTime } from '../format-time.js';
import { offsetMinutesAt } from '../../core/time-zone.js';
import { instantKey, naturalKey, oneLine } from './render.js';
import { accessSignal, combine, decay, PRIORITY_IMPORTANCE } from './score.js';

/** What the record layers are built from. */
export interface RecordInputs {
  facts: readonly Fact[];
  tasks: readonly Task[];
  projects: readonly Project[];
  decisions: readonly Decision[];
  /** Normalised full-text scores keyed by `kind:id`. */
  fullText: ReadonlyMap<string, number>;
  /** Access stats keyed by `kind:id`. */
  access: ReadonlyMap<string, { count: number; lastMs: number }>;
  /** Newest decision per project, Unix ms, when `decisions` is a pool that may not hold it. */
  lastDecisionMs?: ReadonlyMap<string, number>;
}

/** The system prompt as one item. */
export function systemCandidates(prompt: string): PackCandidate[] {
  const text = prompt.trim();
  if (text === '') return [];
  return [{ layer: 'system', kind: 'system', id: 'system', sources: [], full: text, priority: 1, order: '0' }];
}

/** Whether a fact belongs to the profile layer (preferences and keyed facts). */
export function isProfileFact(f: Fact): boolean {
  return f.kind === 'preference' || f.key !== null;
}

/** Preferences and keyed facts, most important first, rendered in key order. */
export function profileCandidates(facts: readonly Fact[]): PackCandidate[] {
  return facts.filter(isProfileFact).map((f) => ({
    layer: 'profile',
    kind: f.kind,
    id: f.id,
    sources: [...f.sourceTurnIds],
    full: `- ${f.key ? `${f.key}: ` : ''}${oneLine(f.text)}`,
    // Query-independent: importance, then the newer value.
    priority: f.importance + f.updatedAtMs * 1e-16,
    order: `${f.key ?? '\uffff'}|${naturalKey(f.id)}`,
  }));
}

/** The project with the latest activity (its own update, its tasks, its decisions); undefined if none. */
export function activeProject(inputs: Pick<RecordInputs, 'projects' | 'tasks' | 'decisions' | 'lastDecisionMs'>): Project | undefined {
  const last = new Map<string, number>();
  const bump = (id: string | null, ms: number) => {
    if (id !== null) last.set(id, Math.max(last.get(id) ?? -Infinity, ms));
  };
  for (const p of inputs.projects) bump(p.id, p.updatedAtMs);
  for (const t of inputs.tasks) if (isOpenStatus(t.status)) bump(t.projectId, t.updatedAtMs);
  if (inputs.lastDecisionMs) for (const [id, ms] of inputs.lastDecisionMs) bump(id, ms);
  else for (const d of inputs.decisions) bump(d.projectId, d.createdAtMs);
  let best: Project | undefined;
  for (const p of inputs.projects) {
    const a = last.get(p.id) ?? -Infinity;
    const b = best ? (last.get(best.id) ?? -Infinity) : -Infinity;
    if (!best || a > b || (a === b && p.id < best.id)) best = p;
  }
  return best;
}

/** The active project and its decisions (newest weigh most; rendered oldest first). */
export function projectCandidates(project: Project | undefined, decisions: readonly Decision[], zone: ResolvedRebuildOptions['timeZone']): PackCandidate[] {
  if (!project) return [];
  const out: PackCandidate[] = [
    { layer: 'project', kind: 'project', id: project.id, sources: [...project.sourceTurnIds], full: `Project: ${oneLine(project.name)}`, priority: 2, order: '0' },
  ];
  for (const d of decisions) {
    if (d.projectId !== project.id) continue;
    const text = `- Decided ${formatDate(d.createdAtMs, zone)}: ${oneLine(d.text)}`;
    out.push({
      layer: 'project',
      kind: 'decision',
      id: d.id,
      sources: [...d.sourceTurnIds],
      full: d.rationale ? `${text} (because ${oneLine(d.rationale)})` : text,
      ...(d.rationale ? { compact: text } : {}),
      priority: 1 + d.createdAtMs * 1e-16,
      order: `1|${instantKey(d.createdAtMs)}|${naturalKey(d.id)}`,
    });
  }
  return out;
}

const SOON_MS = 48 * 3_600_000;
const CLOSED_TASKS_GROUP = 'closed';
/** Heading of the closed tasks in the tasks layer (its own top-level heading: they are not open). */
export const CLOSED_TASKS_HEADING = '# Finished or cancelled tasks';

/**
 * The first rounded `now` after `nowMs` at which an open task of `tasks` changes tier in
 * `taskCandidates` (becomes due within 48 h, or overdue); Infinity when none will.
 */
export function nextTaskTierChange(tasks: readonly Task[], nowMs: number): number {
  let next = Infinity;
  for (const t of tasks) {
    if ((t.status !== 'todo' && t.status !== 'doing') || t.dueAtMs === null) continue;
    // overdue ⇔ dueAtMs < now: from dueAtMs + 1 on. Due soon ⇔ now >= dueAtMs - SOON_MS.
    if (t.dueAtMs >= nowMs) next = Math.min(next, t.dueAtMs + 1);
    if (t.dueAtMs - SOON_MS > nowMs) next = Math.min(next, t.dueAtMs - SOON_MS);
  }
  return next;
}

/**
 * Open tasks, plus finished ones when the query asks about finished work. Packing and render
 * order: tasks the query is about (protected while open), overdue, due within 48 h, the rest by
 * due time; within a tier by score. Every task is ranked, but only the protected ones and the
 * `o.taskPool` best of the rest are built into candidates: the tasks layer shows a few dozen,
 * and building, pricing and reporting hundreds was most of a rebuild's time.
 */
export function taskCandidates(inputs: RecordInputs, query: QueryInfo, o: ResolvedRebuildOptions, analyzer: SearchAnalyzer): PackCandidate[] {
  const names = new Map(inputs.projects.map((p) => [p.id, p.name]));
  const ranked: Array<{ id: string; t: Task; open: boolean; overdue: boolean; tier: number; score: number; priority: number; protected: boolean }> = [];
  for (const t of inputs.tasks) {
    const open = isOpenStatus(t.status);
    if (!open && !query.asksDone) continue;
    const key = `task:${t.id}`;
    const ft = inputs.fullText.get(key) ?? 0;
    const mention = Math.max(taskMention(t, query, analyzer), ft >= 0.5 ? ft : 0);
    const asked = mention >= 0.5;
    if (!open && !(query.asksDone && (asked || ft > 0 || query.terms.size <= 3))) continue;
    const overdue = open && t.dueAtMs !== null && t.dueAtMs < o.nowMs;
    const soon = open && !overdue && t.dueAtMs !== null && t.dueAtMs - o.nowMs <= SOON_MS;
    const tier = asked ? 3 : overdue ? 2 : soon ? 1 : 0;
    const score = combine(
      {
        fullText: ft,
        entity: mention,
        recency: decay(o.scoreNowMs - t.updatedAtMs, o.recencyHalfLifeMs),
        importance: PRIORITY_IMPORTANCE[t.priority],
        access: accessSignal(inputs.access.get(key), o.scoreNowMs, o.recencyHalfLifeMs),
      },
      o.weights,
    );
    ranked.push({ id: t.id, t, open, overdue, tier, score, priority: tier * 10 + score, protected: open && asked });
  }
  const out: PackCandidate[] = [];
  for (const { t, open, overdue, tier, score, priority, protected: isProtected } of bestOf(ranked, o.taskPool)) {
    // One zone conversion for both forms: the date is the local time's first field.
    const dueTime = t.dueAtMs === null ? '' : formatDateTime(t.dueAtMs, o.timeZone);
    const late = overdue ? ' (overdue)' : '';
    const due = t.dueAtMs === null ? '' : ` · due ${dueTime}${late}`;
    let extras = t.priority !== 'normal' ? ` · ${t.priority} priority` : '';
    if (t.projectId && names.has(t.projectId)) extras += ` · project ${oneLine(names.get(t.projectId)!)}`;
    const title = oneLine(t.title);
    const compactDue = t.dueAtMs === null ? '' : ` · due ${dueTime.slice(0, dueTime.indexOf(' '))}${late}`;
    const full = `- [${t.status}] ${title}${due}${extras}`;
    const compact = `- [${t.status}] ${title.length > 80 ? `${title.slice(0, 79)}…` : title}${compactDue}`;
    out.push({
      layer: 'tasks',
      kind: 'task',
      id: t.id,
      sources: t.sourceTurnIds,
      full,
      // (undefined, not absent, when equal: the packer only compares it with undefined)
      compact: compact !== full ? compact : undefined,
      priority,
      protected: isProtected,
      // Closed tasks (asked about) come after the open ones, under their own heading: a task
      // completed by the message being answered is no longer listed as open.
      order: `${open ? '' : '9|'}${3 - tier}|${instantKey(t.dueAtMs ?? 8e15)}|${instantKey(-score * 1e6)}|${naturalKey(t.id)}`,
      ...(open ? {} : { group: CLOSED_TASKS_GROUP, groupHeader: CLOSED_TASKS_HEADING }),
    });
  }
  return out;
}

/**
 * The protected items and the `limit` best of the rest by priority (ties by id, as the packer
 * breaks them), in no particular order: the packer sorts its candidates itself.
 */
export function bestOf<T extends { id: string; priority: number; protected?: boolean }>(items: T[], limit: number): T[] {
  const rest = items.filter((x) => !x.protected);
  if (rest.length <= limit) return items;
  rest.sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return [...items.filter((x) => x.protected), ...rest.slice(0, limit)];
}

/**
 * Other memories: free-form facts and the decisions outside the active project, by score.
 * Rendered in time order under a heading per year, each line opening with its month and day
 * ("05-06 Ann moved to Lyon."); each starts as its lead sentence or clause and is shown in full
 * while tokens are left. All are scored; only the `o.memoryCandidates` best are built into
 * candidates.
 */
export function memoryCandidates(inputs: RecordInputs, query: QueryInfo, o: ResolvedRebuildOptions, activeProjectId: string | undefined): PackCandidate[] {
  interface Scored {
    kind: 'fact' | 'decision';
    id: string;
    text: string;
    atMs: number;
    sources: readonly string[];
    ft: number;
    priority: number;
  }
  const scored: Scored[] = [];
  const dateOf = localDates(o.timeZone);
  const add = (kind: 'fact' | 'decision', id: string, text: string, atMs: number, importance: number, sources: readonly string[]) => {
    const key = `${kind}:${id}`;
    const ft = inputs.fullText.get(key) ?? 0;
    const priority = combine(
      {
        fullText: ft,
        entity: entityMatch(text, atMs, query),
        recency: decay(o.scoreNowMs - atMs, o.recencyHalfLifeMs),
        importance,
        access: accessSignal(inputs.access.get(key), o.scoreNowMs, o.recencyHalfLifeMs),
      },
      o.weights,
    );
    scored.push({ kind, id, text, atMs, sources, ft, priority });
  };
  for (const f of inputs.facts) {
    if (!isProfileFact(f)) add('fact', f.id, f.text, f.createdAtMs, f.importance, f.sourceTurnIds);
  }
  for (const d of inputs.decisions) {
    if (d.projectId !== null && d.projectId === activeProjectId) continue;
    add('decision', d.id, d.rationale ? `${d.text} (because ${d.rationale})` : d.text, d.createdAtMs, 0.5, d.sourceTurnIds);
  }
  const chosen = bestOf(sameLinesMerged(scored, dateOf), o.memoryCandidates);
  return chosen.map(({ kind, id, text, atMs, sources, priority }) => {
    const date = dateOf(atMs);
    const year = date.slice(0, date.length - 6);
    // Under a heading per year, a line names only its month and day: the year costs its tokens
    // once per year instead of once per line. No bullet and no colon: the date opens the line
    // (as a speaker opens a history line), 3 tokens instead of 6 ("- 05-06: "), which on a
    // small budget is a memory more per six lines.
    const prefix = `${date.slice(-5)} `;
    const body = oneLine(text);
    const lead = leadOf(body);
    return {
      layer: 'memories',
      kind,
      id,
      sources,
      full: prefix + body,
      compact: lead !== undefined ? prefix + lead : undefined,
      priority,
      // Every memory starts as its lead and is upgraded, best first, while tokens are left: the
      // layer holds more distinct memories before any is dropped (as the history layer does with
      // turns below its first full hit).
      preferCompact: true,
      order: `${instantKey(atMs)}|${naturalKey(id)}`,
      group: `year:${year}`,
      groupHeader: `## ${year}`,
    };
  });
}

/**
 * Records that would render as the same line (same day, same text) as one item: the best score,
 * every source. A store can hold one event twice (two extractions of one message, an import),
 * and a repeated line costs the tokens of a memory the context could have shown instead.
 */
function sameLinesMerged<T extends { id: string; text: string; atMs: number; sources: readonly string[]; ft: number; priority: number }>(items: T[], dateOf: (atMs: number) => string): T[] {
  // By day, then by line (to its place in `out`): no key string joining the two is built (and
  // hashed) per record.
  const byDay = new Map<string, Map<string, number>>();
  const out: T[] = [];
  for (const item of items) {
    const date = dateOf(item.atMs);
    let byLine = byDay.get(date);
    if (!byLine) byDay.set(date, (byLine = new Map()));
    const line = oneLine(item.text);
    const at = byLine.get(line);
    if (at === undefined) {
      byLine.set(line, out.push(item) - 1);
      continue;
    }
    const seen = out[at]!;
    const [keep, other] = item.priority > seen.priority || (item.priority === seen.priority && item.id < seen.id) ? [item, seen] : [seen, item];
    out[at] = { ...keep, ft: Math.max(keep.ft, other.ft), sources: [...new Set([...keep.sources, ...other.sources])] };
  }
  return out.length === items.length ? items : out;
}

/**
 * `formatDate` in `zone`, remembered for one rebuild by local day: the records of a rebuild fall
 * on few days. The day is the instant shifted by the zone's offset there (offsets are cached by
 * time-zone.ts), so any offset, a fixed one of odd minutes too, keys the right day.
 */
function localDates(zone: ResolvedRebuildOptions['timeZone']): (atMs: number) => string {
  const DAY_MS = 86_400_000;
  const byDay = new Map<number, string>();
  return (atMs) => {
    if (!(atMs >= 0)) return formatDate(atMs, zone);
    const day = Math.floor((atMs + offsetMinutesAt(zone, atMs) * 60_000) / DAY_MS);
    let date = byDay.get(day);
    if (date === undefined) byDay.set(day, (date = formatDate(atMs, zone)));
    return date;
  };
}
