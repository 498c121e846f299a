/**
 * The task part of an extraction: title, priority, due and project for a new task; the record
 * meant and the fields that change for update, complete and delete.
 */
import type { Entity, Extraction, Intent, RecentEntity, TaskFields } from '../extraction.js';
import type { TaskPriority } from '../model.js';
import type { MessageDates } from './message-dates.js';
import { resolveTarget } from './references.js';
import type { LanguageRules } from './rule-types.js';
import { cutTitle, fallbackTitle } from './title.js';
import type { TextRange } from './title.js';

/** What the task builders read. */
export interface TaskContext {
  /** The message as analysed (clipped, not normalised). */
  message: string;
  /** NFKC-normalised, lower-cased message. */
  lowered: string;
  rules: LanguageRules;
  dates: MessageDates;
  project: Entity | undefined;
  recent: readonly RecentEntity[];
}

/** The parts of an Extraction a task intent fills in. */
export type TaskPart = Pick<Extraction, 'task' | 'target' | 'clarification'> & {
  /** Caps the intent's confidence (an unsure target lowers it). */
  confidenceCap: number;
};

/** Below this confidence a result carries a clarification question (0..1). */
export const CLARIFY_BELOW = 0.6;

const CHANGE_STATUS = { complete_task: 'done', delete_task: 'cancelled', update_task: 'todo' } as const;
/** A change whose record cannot be told gets at most this confidence. */
const NO_TARGET_CAP = 0.5;
/** A change naming a record that is not among the recent ones (the caller may search for it). */
const UNSEEN_TARGET_CAP = 0.7;

/** A new task, as stated. */
export function newTask(ctx: TaskContext): TaskPart {
  const due = ctx.dates.due();
  const title = cutTitle(ctx.message, mentionRanges(ctx), ctx.rules.title, false) || fallbackTitle(ctx.message, ctx.rules.title);
  const task: TaskFields = {
    title,
    status: 'todo',
    priority: priorityOf(ctx) ?? 'normal',
    due: due?.dueMs ?? null,
    duePhrase: due?.text ?? null,
    project: ctx.project?.text ?? null,
  };
  return { task, confidenceCap: 1 };
}

/** An update, completion or deletion: the record meant and the fields the message states. */
export function changeTask(ctx: TaskContext, intent: keyof typeof CHANGE_STATUS): TaskPart {
  const name = stripReferences(cutTitle(ctx.message, mentionRanges(ctx), ctx.rules.title, true), ctx.rules);
  const { target, record } = resolveTarget({ lowered: ctx.lowered, name, kind: 'task', intent, recent: ctx.recent, rules: ctx.rules.references });
  const stated: NonNullable<TaskFields['stated']> = intent === 'update_task' ? [] : ['status'];
  const due = intent === 'update_task' ? ctx.dates.due() : undefined;
  const priority = priorityOf(ctx);
  if (due) stated.push('due');
  if (priority) stated.push('priority');
  const task: TaskFields = {
    title: record?.text ?? name,
    status: CHANGE_STATUS[intent],
    priority: priority ?? 'normal',
    due: due?.dueMs ?? null,
    duePhrase: due?.text ?? null,
    project: ctx.project?.text ?? null,
    stated,
  };
  if (target && record) {
    const unsure = target.confidence < CLARIFY_BELOW;
    return { task, target, confidenceCap: target.confidence, ...(unsure ? { clarification: ctx.rules.clarifyTarget(record.text) } : {}) };
  }
  const anyRecent = ctx.recent.some((r) => r.kind === 'task');
  if (name.length > 0 && !anyRecent) return { task, confidenceCap: UNSEEN_TARGET_CAP };
  return { task, confidenceCap: NO_TARGET_CAP, clarification: ctx.rules.clarifyWhich() };
}

/** query_project: the project meant, matched against recent projects by name. */
export function projectTarget(ctx: TaskContext, intent: Intent): Pick<Extraction, 'target'> {
  const { target } = resolveTarget({ lowered: ctx.lowered, name: ctx.project?.text ?? '', kind: 'project', intent, recent: ctx.recent, rules: ctx.rules.references });
  return target ? { target } : {};
}

function priorityOf(ctx: TaskContext): TaskPriority | undefined {
  return ctx.rules.priorities.find((p) => p.pattern.test(ctx.lowered))?.priority;
}

function mentionRanges(ctx: TaskContext): TextRange[] {
  return ctx.dates.mentions.map((m) => [m.index, m.index + m.text.length] as const);
}

/** Drops "它", "that one", "第二个" from a change request's name: they point, they do not name. */
function stripReferences(name: string, rules: LanguageRules): string {
  let out = name;
  for (const pattern of [rules.references.ordinal, rules.references.last, rules.references.pronoun]) {
    out = out.replace(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}gi`), ' ');
  }
  return out.replace(/\s+/g, ' ').replace(/^[\s的了]+|[\s的了]+$/g, '').trim();
}
