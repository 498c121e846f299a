/**
 * What the rebuilder reads out of the query: its search terms, the entities it names (people,
 * projects, task titles) and whether it asks about finished tasks.
 */
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
}

const DONE_CUES = /\b(done|finished|completed?|closed|cancell?ed)\b|完成|做完|搞定|办完|结束了|取消/iu;
const CAPITALISED = /\b[A-Z][\p{L}'’-]*\p{L}/gu;

/** Analyses `query` against the user's projects. */
export function analyseQuery(query: string, analyzer: SearchAnalyzer, projects: readonly Project[]): QueryInfo {
  const terms = new Set(analyzer(query));
  const names = new Set<string>();
  for (const match of query.matchAll(CAPITALISED)) {
    const word = match[0].replace(/['’]s$/u, '');
    // A capitalised stopword ("When", "I") yields no terms.
    if (analyzer(word).length > 0) names.add(word.toLowerCase());
  }
  const lower = query.toLowerCase();
  const projectIds = new Set<string>();
  for (const p of projects) {
    const name = p.name.trim().toLowerCase();
    if (name.length > 0 && (lower.includes(name) || coverage(analyzer(name), terms) === 1)) projectIds.add(p.id);
  }
  return { text: query, terms, names, projectIds, asksDone: DONE_CUES.test(query) };
}

/** Share (0..1) of the distinct `itemTerms` that occur in `queryTerms`; 0 for no terms. */
export function coverage(itemTerms: readonly string[], queryTerms: ReadonlySet<string>): number {
  const distinct = new Set(itemTerms);
  if (distinct.size === 0) return 0;
  let hit = 0;
  for (const t of distinct) if (queryTerms.has(t)) hit++;
  return hit / distinct.size;
}

/** How strongly the query is about `task` (0..1): the share of its title's terms the query uses, or 1 when it names its project. */
export function taskMention(task: Task, query: QueryInfo, analyzer: SearchAnalyzer): number {
  const share = coverage(analyzer(task.title), query.terms);
  const inProject = task.projectId !== null && query.projectIds.has(task.projectId) ? 0.5 : 0;
  return Math.max(share, inProject);
}

/** Share (0..1) of the query's names that `text` or `speaker` mention. */
export function nameMatch(text: string, speaker: string | null, query: QueryInfo): number {
  if (query.names.size === 0) return 0;
  const lower = text.toLowerCase();
  const who = speaker?.toLowerCase() ?? '';
  let hit = 0;
  for (const name of query.names) if (who === name || lower.includes(name)) hit++;
  return hit / query.names.size;
}
