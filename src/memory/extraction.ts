/**
 * What the extractor returns for one message (DESIGN.md step 1 "extract"), shared by the rule
 * extractor, the optional LLM extractor and the manager that applies it.
 */
import type { TimeZone } from '../core/time-zone.js';
import type { TaskPriority, TaskStatus } from './model.js';

/** What the user wants from this message. */
export type Intent =
  | 'create_task'
  | 'update_task'
  | 'complete_task'
  | 'delete_task'
  | 'query_tasks'
  | 'query_project'
  | 'record_decision'
  | 'record_fact'
  | 'set_preference'
  | 'recall'
  | 'chat';

/** Kinds of entities found in a message. */
export type EntityType = 'task' | 'project' | 'person' | 'place' | 'decision' | 'fact' | 'date' | 'time';

/** One entity mention. */
export interface Entity {
  type: EntityType;
  /** As written in the message. */
  text: string;
  /** Offset in the message, UTF-16 code units. */
  index?: number;
  /** For date/time: the instant, Unix ms. */
  valueMs?: number;
}

/** A recently mentioned record, for resolving "它", "这个任务", "the second one". */
export interface RecentEntity {
  kind: 'task' | 'project' | 'decision' | 'fact';
  id: string;
  /** Title or name, for fuzzy matching ("周报" ↔ "写周报"). */
  text: string;
  /** For tasks: status, so "完成它" prefers an open task. */
  status?: TaskStatus;
}

/** The task fields a message states (create) or changes (update/complete/delete). */
export interface TaskFields {
  title: string;
  status: TaskStatus;
  priority: TaskPriority;
  /** Due instant, Unix ms, or null. */
  due: number | null;
  /** The due phrase as written. */
  duePhrase: string | null;
  /** Project name, when the message names one. */
  project: string | null;
  /**
   * Which of the fields above the message actually states, for change requests: an update
   * applies only these ("改到下午四点" → ["due"]). Absent means all of them (a new task).
   */
  stated?: Array<'title' | 'status' | 'priority' | 'due' | 'project'>;
}

/** Which existing record a message refers to. */
export interface ResolvedReference {
  kind: RecentEntity['kind'];
  id: string;
  /** The phrase that referred to it ("它", "第二个", "周报"). */
  phrase: string;
  /** 0..1 */
  confidence: number;
}

/** The extractor's reading of one message. */
export interface Extraction {
  intent: Intent;
  /** 0..1; below the manager's threshold it asks instead of writing. */
  confidence: number;
  entities: Entity[];
  /** For task intents: the task as stated (create) or the fields that change (others). */
  task?: TaskFields;
  /** For update/complete/delete/query_project: the record meant, when resolved. */
  target?: ResolvedReference;
  /** For record_decision / record_fact / set_preference: the statement, its key and rationale. */
  memory?: {
    text: string;
    key?: string | null;
    /** For keyed preferences/facts: the normalised value ("Asia/Shanghai", "+08:00", "priority", "zh"). */
    value?: string | null;
    rationale?: string | null;
  };
  /** The question to ask when confidence is low ("你指的是「完成XX项目」这个任务吗？"). */
  clarification?: string;
  /**
   * The intent holds only if `target` resolves: a completion read from a report's grammar ("I
   * called the dentist") with no matching task is chat (`settleTentative`).
   */
  tentative?: boolean;
  /** Language the rules read the message as. */
  language: 'zh' | 'en';
  /** Which extractor produced it. */
  source: 'rules' | 'llm';
}

/** Options of `extract`. */
export interface ExtractOptions {
  /** Reference instant, Unix ms. */
  now: number;
  /** The user's zone (IANA name or minutes east of UTC). */
  timeZone: TimeZone;
  /** Recently mentioned records, most recent first. */
  recent?: readonly RecentEntity[];
}

/** `x` as it stands once its target is known: a tentative change with no target becomes chat. */
export function settleTentative(x: Extraction): Extraction {
  if (!x.tentative || x.target) return x;
  const { task: _task, tentative: _tentative, clarification: _clarification, ...rest } = x;
  return { ...rest, intent: 'chat', entities: x.entities.filter((e) => e.type !== 'task') };
}
