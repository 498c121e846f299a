/**
 * The zod schema an LLM's reply must satisfy: the Extraction shape (extraction.ts) minus
 * `source`, which the extractor sets. Two allowances for what models do well and badly: `due`
 * may be an ISO-8601 string as well as Unix ms (models compute epoch milliseconds poorly), and
 * absent optional parts may be null. Everything else is strict: unknown intents, entity types,
 * statuses or priorities, confidences outside 0..1 and extra keys are rejected.
 */
import { z } from 'zod';
import type { Extraction } from '../extraction.js';

const INTENTS = [
  'create_task',
  'update_task',
  'complete_task',
  'delete_task',
  'query_tasks',
  'query_project',
  'record_decision',
  'record_fact',
  'set_preference',
  'recall',
  'chat',
] as const;
const ENTITY_TYPES = ['task', 'project', 'person', 'place', 'decision', 'fact', 'date', 'time'] as const;
const TASK_FIELD_NAMES = ['title', 'status', 'priority', 'due', 'project'] as const;

const unit = z.number().min(0).max(1);
/** Unix ms, or an ISO-8601 instant with a zone ("2026-03-10T15:00:00+08:00"). */
const instant = z.union([
  z.number().int(),
  z.iso.datetime({ offset: true }).transform((iso) => Date.parse(iso)),
]);

const entitySchema = z.strictObject({
  type: z.enum(ENTITY_TYPES),
  text: z.string().min(1).max(500),
  index: z.number().int().min(0).optional(),
  valueMs: instant.optional(),
});

const taskSchema = z.strictObject({
  title: z.string().max(500),
  status: z.enum(['todo', 'doing', 'done', 'cancelled']),
  priority: z.enum(['low', 'normal', 'high', 'urgent']),
  due: instant.nullable(),
  duePhrase: z.string().max(200).nullable(),
  project: z.string().max(200).nullable(),
  stated: z.array(z.enum(TASK_FIELD_NAMES)).optional(),
});

const targetSchema = z.strictObject({
  kind: z.enum(['task', 'project', 'decision', 'fact']),
  id: z.string().min(1),
  phrase: z.string().max(200),
  confidence: unit,
});

const memorySchema = z.strictObject({
  text: z.string().min(1).max(2000),
  key: z.string().max(100).nullable().optional(),
  rationale: z.string().max(2000).nullable().optional(),
});

/** A reply as the LLM must write it. */
export const llmReplySchema = z.strictObject({
  intent: z.enum(INTENTS),
  confidence: unit,
  entities: z.array(entitySchema).max(100),
  task: taskSchema.nullable().optional(),
  target: targetSchema.nullable().optional(),
  memory: memorySchema.nullable().optional(),
  clarification: z.string().min(1).max(500).nullable().optional(),
  language: z.enum(['zh', 'en']),
});

/** A validated reply. */
export type LlmReply = z.infer<typeof llmReplySchema>;

/** An Extraction from a validated reply: nulls dropped, `source` set to "llm". */
export function toExtraction(reply: LlmReply): Extraction {
  const { task, target, memory, clarification, ...rest } = reply;
  return {
    ...rest,
    ...(task ? { task } : {}),
    ...(target ? { target } : {}),
    ...(memory ? { memory } : {}),
    ...(clarification ? { clarification } : {}),
    source: 'llm',
  };
}
