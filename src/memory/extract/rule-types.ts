/**
 * The shape of a language's rule tables (rules.zh.ts, rules.en.ts). The engine (extract.ts and
 * its helpers) is language-neutral; everything that depends on wording lives in these tables.
 */
import type { TaskPriority } from '../model.js';

/**
 * What a matched cue is evidence for. Task actions (`create` … `complete`) need task-domain
 * evidence (`task`) to win; `other` is evidence of a non-task request (music, weather, lights)
 * and cancels `task`. The memory signals stand on their own.
 */
export type Signal =
  | 'create'
  | 'query'
  | 'delete'
  | 'update'
  | 'complete'
  | 'task'
  | 'other'
  | 'decision'
  | 'fact'
  | 'preference'
  | 'recall'
  | 'project'
  | 'question';

/** One weighted cue: every match of `pattern` adds `adds` once (not per occurrence). */
export interface SignalRule {
  /** Short id, for debugging and tests. */
  name: string;
  pattern: RegExp;
  adds: Partial<Record<Signal, number>>;
}

/** A preference statement and the key it sets. */
export interface PreferenceRule {
  pattern: RegExp;
  /** Stable key ("taskSort", "timeZone", "language", "name"), or null for free-form. */
  key: string | null;
  /** Group holding the value ("上海", "PST"), when the rule can tell. */
  valueGroup?: string;
}

/** Ways a message points at a recent record. */
export interface ReferenceRules {
  /** "它", "这个任务", "that one", "it": the most recent record. */
  pronoun: RegExp;
  /** An ordinal, with group `n` holding the word or digits ("第二个", "the second one"). */
  ordinal: RegExp;
  /** "最后一个", "the last one". */
  last: RegExp;
  /** Turns the ordinal's `n` group into a 1-based position, or undefined. */
  ordinalValue(n: string): number | undefined;
}

/** How a task title is cut out of a message. */
export interface TitleRules {
  /** Removed repeatedly from the start: fillers, politeness, "remind me to", "记得". */
  leading: readonly RegExp[];
  /** Removed repeatedly from the end: particles, "please", "to my list". */
  trailing: readonly RegExp[];
  /** Removed anywhere: priority words, deadline markers left behind by a due phrase. */
  anywhere: readonly RegExp[];
  /** Words that join a title to the rest (a trailing "at", "的"), trimmed after cutting. */
  dangling: RegExp;
  /**
   * Removed from a change request (complete, update, delete) to leave the name of the task it is
   * about: "把写周报标记为完成" → 写周报, "move the standup to 4pm" → the standup.
   */
  target: readonly RegExp[];
  /** Deadline cues cut together with a date phrase: "by" before it, "前" after it. */
  dateCue: { before: RegExp; after: RegExp };
  /** Titles used when cutting leaves nothing: the first whose pattern matches the message. */
  fallback: ReadonlyArray<readonly [RegExp, string]>;
}

/** Everything the engine needs for one language. */
export interface LanguageRules {
  language: 'zh' | 'en';
  signals: readonly SignalRule[];
  priorities: ReadonlyArray<{ pattern: RegExp; priority: TaskPriority }>;
  preferences: readonly PreferenceRule[];
  references: ReferenceRules;
  title: TitleRules;
  /** Splits a decision into statement and rationale: groups `statement` and `rationale`. */
  rationale: RegExp;
  /** Cuts the subject of a recall question ("我上次说的「预算」是什么" → 预算): group `topic`. */
  recallTopic: RegExp;
  /** Finds a project name: group `name` (or `name2`). */
  project: RegExp;
  /** Removed from the start of a project name found by `project` ("完成XX项目" → XX). */
  projectTrim: RegExp;
  /** Finds people: group `name` (a name) or `rel` (a relation: "my sister", "妈妈"). */
  person: RegExp;
  /** Finds places: group `name` (or `name2`). */
  place: RegExp;
  /**
   * A statement of where the user is or what their zone is ("I'm in Berlin", "my time zone is
   * PST", "我在纽约", "时区改成东八区"): group `place` holds the name, which sets the user's zone
   * only when the zone database knows it (core/zone-names.ts).
   */
  zoneStatement: RegExp;
  /**
   * A report of an action as done, by its grammar rather than a completion word: a past-tense
   * verb after the subject ("I called the dentist": group `verb`, checked against the past forms
   * of lexicons.ts) or a result complement ("周报发完了", "我给牙医打了电话": no `verb` group).
   */
  reportedDone: RegExp;
  /** The question asked when the record meant is unsure: "你指的是「写周报」这个任务吗？". */
  clarifyTarget(title: string): string;
  /** The question asked when a change names no record that can be found. */
  clarifyWhich(): string;
  /** The question asked when the intent itself is unsure, about what would be saved. */
  clarifyIntent(summary: string): string;
}
