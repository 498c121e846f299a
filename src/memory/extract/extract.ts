/**
 * The rule extractor (DESIGN.md "Memory engine", step 1): one user message in, its intent,
 * entities, task fields, target record, memory statement and a confidence out. Pure and
 * synchronous; Chinese and English rules (rules.zh.ts, rules.en.ts), chosen per message.
 *
 * Only the first MAX_ANALYZED_CHARS of a message are read: a pasted document is not a command,
 * and the date grammar's cost grows with the text. Odd text (empty, emoji, markup, SQL) never
 * throws; bad options (a non-finite `now`, an unknown zone, `recent` not an array) throw a
 * UsageError.
 */
import { validateTimeZone } from '../../core/time-zone.js';
import { UsageError } from '../../errors.js';
import type { Entity, ExtractOptions, Extraction, RecentEntity } from '../extraction.js';
import { classify } from './classify.js';
import { dateEntities, findPeopleAndPlaces, findProject } from './entities.js';
import type { SyncExtractor } from './extractor.js';
import type { LanguageRules } from './rule-types.js';
import { detectLanguage } from './language.js';
import { pastTenseBase } from './lexicons.js';
import { memoryPart, statedZone } from './memory-fields.js';
import { MessageDates } from './message-dates.js';
import { EN_RULES } from './rules.en.js';
import { ZH_RULES } from './rules.zh.js';
import { CLARIFY_BELOW, changeTask, newTask, projectTarget } from './task-fields.js';
import type { TaskContext, TaskPart } from './task-fields.js';

/** Longest prefix of a message that is analysed, UTF-16 code units (default 2000). */
export const MAX_ANALYZED_CHARS = 2000;

const WRITES = new Set<Extraction['intent']>(['create_task', 'record_decision', 'record_fact', 'set_preference']);
/** Confidence of a statement of place or zone the zone database resolved. */
const ZONE_STATEMENT_CONFIDENCE = 0.9;
/** Longest summary quoted in a clarification question. */
const SUMMARY_CHARS = 40;

/** Extracts one message with the rules; see the module comment. */
export function extract(text: string, options: ExtractOptions): Extraction {
  const recent = validateExtractOptions(options);
  const { message, language, rules, lowered, dates, classification, project, found, zone } = analyse(typeof text === 'string' ? text : '', options);
  const entities: Entity[] = found.map((e) => ({ ...e }));
  if (zone !== undefined) {
    // "I'm in Berlin", "我的时区是东八区": the zone database knows the place, so it is the user's zone.
    return { intent: 'set_preference', confidence: ZONE_STATEMENT_CONFIDENCE, entities, language, source: 'rules', memory: { text: message.trim(), key: 'timeZone', value: zone, rationale: null } };
  }
  const { intent } = classification;
  const result: Extraction = { intent, confidence: classification.confidence, entities, language, source: 'rules' };

  const ctx: TaskContext = { message, lowered, rules, dates, project, recent };
  let part: TaskPart | undefined;
  if (intent === 'create_task') part = newTask(ctx);
  else if (intent === 'update_task' || intent === 'complete_task' || intent === 'delete_task') part = changeTask(ctx, intent);
  else if (intent === 'query_project') Object.assign(result, projectTarget(ctx, intent));
  if (intent === 'complete_task' && !classification.matched.includes('complete')) {
    // Only the report's grammar says "done": it completes a task that matches, else it is chat.
    result.tentative = true;
    if (part) delete part.clarification;
  }
  if (part) {
    const { confidenceCap, ...fields } = part;
    Object.assign(result, fields);
    result.confidence = Math.min(result.confidence, confidenceCap);
    if (fields.task && fields.task.title) entities.push({ type: 'task', text: fields.task.title });
  }
  const { entity, ...memory } = memoryPart(intent, message, lowered, rules);
  Object.assign(result, memory);
  if (entity) entities.push(entity);

  if (result.clarification === undefined && WRITES.has(intent) && result.confidence < CLARIFY_BELOW) {
    result.clarification = rules.clarifyIntent(summarize(result.task?.title ?? result.memory?.text ?? message));
  }
  entities.sort((a, b) => (a.index ?? Number.MAX_SAFE_INTEGER) - (b.index ?? Number.MAX_SAFE_INTEGER));
  return result;
}

/** What a message says whatever records it is matched against. */
interface Analysis {
  message: string;
  language: Extraction['language'];
  rules: LanguageRules;
  lowered: string;
  dates: MessageDates;
  classification: ReturnType<typeof classify>;
  project: Entity | undefined;
  /** Dates, project, people and places (copied per result: results own their entities). */
  found: readonly Entity[];
  /** The zone the message states as the user's ("I'm in Berlin"), as stored; undefined if none. */
  zone: string | undefined;
}

// The last analysis: a change request that names no recent task is read again against every
// open task (manager.ts), and only the records differ; the date grammar, the classifier and
// the entity rules need not run twice. Keyed by everything the analysis reads.
let last: { text: string; now: number; timeZone: ExtractOptions['timeZone']; analysis: Analysis } | undefined;

function analyse(text: string, options: ExtractOptions): Analysis {
  if (last && last.text === text && last.now === options.now && last.timeZone === options.timeZone) return last.analysis;
  const message = clip(text);
  const language = detectLanguage(message);
  const rules = language === 'zh' ? ZH_RULES : EN_RULES;
  const lowered = message.normalize('NFKC').toLowerCase();
  const dates = new MessageDates(message, options);
  const classification = classify(lowered, rules, { any: dates.mentions.length > 0, upcoming: dates.upcoming }, reportsDone(lowered, rules));
  const project = findProject(message, rules);
  const found: Entity[] = [...dateEntities(dates.mentions), ...(project ? [project] : []), ...findPeopleAndPlaces(message, rules)];
  const zone = statedZone(lowered, rules);
  const analysis: Analysis = { message, language, rules, lowered, dates, classification, project, found, zone };
  last = { text, now: options.now, timeZone: options.timeZone, analysis };
  return analysis;
}

/** Whether the message reports an action as done by its grammar (see `LanguageRules.reportedDone`). */
function reportsDone(lowered: string, rules: LanguageRules): boolean {
  const match = rules.reportedDone.exec(lowered);
  if (!match) return false;
  const verb = match.groups?.verb;
  if (verb === undefined) return true;
  const base = pastTenseBase(verb);
  // (a state, not an action: "I was at the dentist")
  return base !== undefined && base !== 'be';
}

/** The rule extractor behind the Extractor seam. */
export function createRuleExtractor(): SyncExtractor & { readonly name: 'rules' } {
  return { name: 'rules', extract };
}

/** Throws a UsageError unless `options` are usable; returns `recent` (default []). */
export function validateExtractOptions(options: ExtractOptions): readonly RecentEntity[] {
  if (options === null || typeof options !== 'object') throw new UsageError('extract: options {now, timeZone} are required');
  if (typeof options.now !== 'number' || !Number.isFinite(options.now)) {
    throw new UsageError(`extract: "now" must be an instant in Unix ms, got ${String(options.now)}`);
  }
  validateTimeZone(options.timeZone);
  if (options.recent !== undefined && !Array.isArray(options.recent)) throw new UsageError('extract: "recent" must be an array of recent entities');
  return options.recent ?? [];
}

function clip(text: string): string {
  if (text.length <= MAX_ANALYZED_CHARS) return text;
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[MAX_ANALYZED_CHARS - 1] ?? '') ? MAX_ANALYZED_CHARS - 1 : MAX_ANALYZED_CHARS;
  return text.slice(0, end);
}

function summarize(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS)}…` : flat;
}
