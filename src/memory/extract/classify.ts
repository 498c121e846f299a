/**
 * Turns a language's weighted cues (rules.zh.ts, rules.en.ts) into an intent.
 *
 * Each rule that matches adds its weights once. Task actions compete only when the task domain
 * outweighs the non-task domain (`task` − `other` > 0): "set an alarm" and "set the volume"
 * share a verb, not a domain. A task message with no action cue is a query when it reads as a
 * question or names nothing to schedule, else a new task ("meeting with Li on Friday").
 * Memory statements (decision, fact, preference, recall, project status) compete on their own
 * scores and win ties, since they are rarer and their cues are specific.
 */
import type { Intent } from '../extraction.js';
import type { LanguageRules, Signal } from './rule-types.js';

/** Sums of rule weights per signal. */
export type SignalScores = Record<Signal, number>;

/** The intent and how clearly it won. */
export interface Classification {
  intent: Intent;
  /** 0..1 */
  confidence: number;
  scores: SignalScores;
  /** Names of the rules that matched, in table order. */
  matched: string[];
}

const SIGNALS: readonly Signal[] = ['create', 'query', 'delete', 'update', 'complete', 'task', 'other', 'decision', 'fact', 'preference', 'recall', 'project', 'question'];
const ACTIONS = [
  ['complete', 'complete_task'],
  ['delete', 'delete_task'],
  ['update', 'update_task'],
  ['create', 'create_task'],
  ['query', 'query_tasks'],
] as const satisfies ReadonlyArray<readonly [Signal, Intent]>;
const MEMORY = [
  ['recall', 'recall'],
  ['decision', 'record_decision'],
  ['preference', 'set_preference'],
  ['fact', 'record_fact'],
] as const satisfies ReadonlyArray<readonly [Signal, Intent]>;

/** Scores below this do not make a memory statement. */
const MEMORY_MIN = 4;
/** Task-domain weight needed to read a message without an action cue as a task. */
const DEFAULT_DOMAIN_MIN = 2.5;
/** How much a question lowers a decision, fact or preference. */
const QUESTION_PENALTY = 2;
/** Task-domain weight a date adds when nothing points elsewhere. */
const DATED_TASK_BONUS = 2.5;
/** The same for a question. */
const DATED_QUESTION_BONUS = 1.5;
/** project cues at or above this (a project and a status word) make query_project. */
const PROJECT_MIN = 4;

/** What the date resolver found in the message. */
export interface DateEvidence {
  /** Any date or time mention. */
  any: boolean;
  /** A mention that is not over yet (today, tomorrow, "at 3pm"), as opposed to "yesterday". */
  upcoming: boolean;
}

/** Weights a report of something done ("I called the dentist", "周报发完了") adds, when nothing points elsewhere. */
const REPORTED_DONE = { complete: 3.5, task: 2.5 } as const;
/** A message with an action cue of this weight (ask, add, remove) is not read as a report. */
const REPORT_ACTION_MAX = 1;

/** Scores `text` (already lower-cased) against `rules`; `reportedDone`: the message reports an action as done. */
export function classify(text: string, rules: LanguageRules, dates: DateEvidence, reportedDone = false): Classification {
  const scores = Object.fromEntries(SIGNALS.map((s) => [s, 0])) as SignalScores;
  const matched: string[] = [];
  for (const rule of rules.signals) {
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(text)) continue;
    matched.push(rule.name);
    for (const [signal, weight] of Object.entries(rule.adds) as Array<[Signal, number]>) scores[signal] += weight;
  }
  // An upcoming date in a message about nothing else points at the user's schedule
  // ("周六和妹妹吃饭"); less so in a question, which may ask about the world ("is the weekend
  // going to be nice").
  if (dates.upcoming && scores.other <= 0) scores.task += scores.question > 0 ? DATED_QUESTION_BONUS : DATED_TASK_BONUS;
  // A report of a finished action completes a task only if one matches (the extractor marks it
  // tentative); a question is not a report.
  // (only a plain statement: an action asked for, cancelled or queried is no report)
  const reported = reportedDone && scores.question <= 0 && Math.max(scores.query, scores.create, scores.delete) < REPORT_ACTION_MAX;
  if (reported) {
    scores.complete += REPORTED_DONE.complete;
    scores.task += REPORTED_DONE.task;
    matched.push('reported-done');
  }
  const candidates: Array<{ intent: Intent; score: number }> = [];
  const domain = scores.task - scores.other;
  if (domain > 0) {
    let best: { intent: Intent; score: number } | undefined;
    for (const [signal, intent] of ACTIONS) {
      if (scores[signal] > 0 && (!best || scores[signal] > best.score)) best = { intent, score: scores[signal] };
    }
    // Without an action cue only a clear task domain makes a task ("meeting with Li on Friday").
    if (!best && domain >= DEFAULT_DOMAIN_MIN) best = { intent: scores.question > 0 || !dates.any ? 'query_tasks' : 'create_task', score: 1 };
    if (best) candidates.push({ intent: best.intent, score: best.score + Math.min(domain, 4) / 4 });
  }
  for (const [signal, intent] of MEMORY) {
    // A question states nothing to remember ("我在二十四号要上班吗"); recall is a question.
    const score = scores[signal] - (signal !== 'recall' && scores.question > 0 ? QUESTION_PENALTY : 0);
    if (score >= MEMORY_MIN) candidates.push({ intent, score: score + 0.5 });
  }
  if (scores.project >= PROJECT_MIN && scores.question > 0) candidates.push({ intent: 'query_project', score: scores.project + 1 });
  // A report stands whatever its domain ("booked the flights"): it only completes a task that matches.
  if (reported && domain <= 0) candidates.push({ intent: 'complete_task', score: REPORTED_DONE.complete });
  candidates.sort((a, b) => b.score - a.score);
  const top = candidates[0];
  if (!top) return { intent: 'chat', confidence: chatConfidence(domain), scores, matched };
  const margin = top.score - (candidates[1]?.score ?? 0);
  return { intent: top.intent, confidence: intentConfidence(top.score, margin, domain), scores, matched };
}

/** More evidence and a wider lead give more confidence; a contested domain gives less. */
function intentConfidence(score: number, margin: number, domain: number): number {
  const base = 0.42 + 0.05 * Math.min(score, 6) + 0.04 * Math.min(margin, 4);
  const contested = domain > 0 && domain < 1.5 ? 0.1 : 0;
  return clamp(base - contested, 0.3, 0.97);
}

function chatConfidence(domain: number): number {
  // Clearly non-task ("play some jazz") is a confident chat; no evidence either way is less so.
  return clamp(0.55 + 0.06 * Math.min(-domain, 6), 0.5, 0.95);
}

const clamp = (x: number, lo: number, hi: number) => Math.round(Math.min(hi, Math.max(lo, x)) * 100) / 100;
