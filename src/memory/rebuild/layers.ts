/**
 * Candidates of the record layers: system, profile, project (stable: nothing here may depend on
 * the query, the clock or access counts), tasks and other memories (volatile).
 */
import type { SearchAnalyzer } from '../analyzer.js';
import type { Decision, Fact, Project, Task } from '../model.js';
import { keySentence } from './compress.js';
import type { ResolvedRebuildOptions } from './options.js';
import type { PackCandidate } from './pack.js';
import { entityMatch, taskMention, type QueryInfo } from './query.js';
import { formatLocalDate as formatDate, formatLocalTime as formatDateTime } from '../format-time.js';
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
  for (const t of inputs.tasks) if (t.status === 'todo' || t.status === 'doing') bump(t.projectId, t.updatedAtMs);
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

/**
 * Open tasks, plus finished ones when the query asks about finished work. Packing and render
 * order: tasks the query is about (protected while open), overdue, due within 48 h, the rest by
 * due time; within a tier by score.
 */
export function taskCandidates(inputs: RecordInputs, query: QueryInfo, o: ResolvedRebuildOptions, analyzer: SearchAnalyzer): PackCandidate[] {
  const names = new Map(inputs.projects.map((p) => [p.id, p.name]));
  const out: PackCandidate[] = [];
  for (const t of inputs.tasks) {
    const open = t.status === 'todo' || t.status === 'doing';
    if (!open && !query.asksDone) continue;
    const ft = inputs.fullText.get(`task:${t.id}`) ?? 0;
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
        recency: decay(o.nowMs - t.updatedAtMs, o.recencyHalfLifeMs),
        importance: PRIORITY_IMPORTANCE[t.priority],
        access: accessSignal(inputs.access.get(`task:${t.id}`), o.nowMs, o.recencyHalfLifeMs),
      },
      o.weights,
    );
    const due = t.dueAtMs === null ? '' : ` · due ${formatDateTime(t.dueAtMs, o.timeZone)}${overdue ? ' (overdue)' : ''}`;
    const extras = [t.priority !== 'normal' ? `${t.priority} priority` : '', t.projectId && names.has(t.projectId) ? `project ${oneLine(names.get(t.projectId)!)}` : '']
      .filter(Boolean)
      .map((s) => ` · ${s}`)
      .join('');
    const title = oneLine(t.title);
    const compactDue = t.dueAtMs === null ? '' : ` · due ${formatDate(t.dueAtMs, o.timeZone)}${overdue ? ' (overdue)' : ''}`;
    const full = `- [${t.status}] ${title}${due}${extras}`;
    const compact = `- [${t.status}] ${title.length > 80 ? `${title.slice(0, 79)}…` : title}${compactDue}`;
    out.push({
      layer: 'tasks',
      kind: 'task',
      id: t.id,
      sources: [...t.sourceTurnIds],
      full,
      ...(compact !== full ? { compact } : {}),
      priority: tier * 10 + score,
      protected: open && asked,
      order: `${3 - tier}|${open ? 0 : 1}|${instantKey(t.dueAtMs ?? 8e15)}|${instantKey(-score * 1e6)}|${naturalKey(t.id)}`,
    });
  }
  return out;
}

/**
 * Other memories: free-form facts and the decisions outside the active project, by score.
 * Rendered in time order with their date; a long one compresses to its key sentence.
 */
export function memoryCandidates(inputs: RecordInputs, query: QueryInfo, o: ResolvedRebuildOptions, analyzer: SearchAnalyzer, activeProjectId: string | undefined): PackCandidate[] {
  const out: PackCandidate[] = [];
  const add = (kind: 'fact' | 'decision', id: string, text: string, atMs: number, importance: number, sources: readonly string[]) => {
    const ft = inputs.fullText.get(`${kind}:${id}`) ?? 0;
    const score = combine(
      {
        fullText: ft,
        entity: entityMatch(text, atMs, query),
        recency: decay(o.nowMs - atMs, o.recencyHalfLifeMs),
        importance,
        access: accessSignal(inputs.access.get(`${kind}:${id}`), o.nowMs, o.recencyHalfLifeMs),
      },
      o.weights,
    );
    const prefix = `- ${formatDate(atMs, o.timeZone)}: `;
    const body = oneLine(text);
    const key = keySentence(body, query.terms, analyzer);
    out.push({
      layer: 'memories',
      kind,
      id,
      sources: [...sources],
      full: prefix + body,
      ...(key !== undefined ? { compact: prefix + key } : {}),
      priority: score,
      // Items the query does not match at all start short, so more of them fit.
      preferCompact: ft === 0,
      order: `${instantKey(atMs)}|${naturalKey(id)}`,
    });
  };
  for (const f of inputs.facts) {
    if (!isProfileFact(f)) add('fact', f.id, f.text, f.createdAtMs, f.importance, f.sourceTurnIds);
  }
  for (const d of inputs.decisions) {
    if (d.projectId !== null && d.projectId === activeProjectId) continue;
    add('decision', d.id, d.rationale ? `${d.text} (because ${d.rationale})` : d.text, d.createdAtMs, 0.5, d.sourceTurnIds);
  }
  return out;
}
