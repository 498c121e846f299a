/**
 * An optional extractor backed by the caller's LLM: it asks for the Extraction as one JSON
 * object, validates the reply with zod (llm-schema.ts) and checks that a target names one of the
 * recent records. A reply that is not JSON, breaks the schema or names an unknown record, and an
 * `llm` call that throws, all fall back to the fallback extractor (the rules by default), whose
 * result says `source: "rules"`; `onFallback` hears why.
 */
import { zonedParts } from '../../core/time-zone.js';
import type { ExtractOptions, Extraction, RecentEntity } from '../extraction.js';
import { MAX_ANALYZED_CHARS, createRuleExtractor, validateExtractOptions } from './extract.js';
import type { AsyncExtractor, Extractor } from './extractor.js';
import { llmReplySchema, toExtraction } from './llm-schema.js';

/** Options of createLlmExtractor. */
export interface LlmExtractorOptions {
  /** The caller's model: a prompt in, the reply text out. */
  llm: (prompt: string) => Promise<string>;
  /** Used when the reply cannot be used; default the rule extractor. */
  fallback?: Extractor;
  /** Told why a reply was not used ("invalid-json", "schema", "unknown-target", "llm-error"). */
  onFallback?: (reason: LlmFallbackReason, detail: string) => void;
}

/** Why an LLM reply was not used. */
export type LlmFallbackReason = 'invalid-json' | 'schema' | 'unknown-target' | 'llm-error';

/** Result of reading a reply. */
export type LlmReplyResult = { ok: true; extraction: Extraction } | { ok: false; reason: LlmFallbackReason; detail: string };

/** Creates the LLM extractor; see the module comment. */
export function createLlmExtractor(options: LlmExtractorOptions): AsyncExtractor & { readonly name: 'llm' } {
  const fallback = options.fallback ?? createRuleExtractor();
  return {
    name: 'llm',
    async extract(text: string, extractOptions: ExtractOptions): Promise<Extraction> {
      const recent = validateExtractOptions(extractOptions);
      let result: LlmReplyResult;
      try {
        result = parseLlmReply(await options.llm(buildExtractionPrompt(text, extractOptions)), recent);
      } catch (error) {
        result = { ok: false, reason: 'llm-error', detail: error instanceof Error ? error.message : String(error) };
      }
      if (result.ok) return result.extraction;
      options.onFallback?.(result.reason, result.detail);
      return fallback.extract(text, extractOptions);
    },
  };
}

/** The prompt: instructions, the reply's shape, the clock, the recent records, the message. */
export function buildExtractionPrompt(text: string, options: ExtractOptions): string {
  const message = typeof text === 'string' ? text.slice(0, MAX_ANALYZED_CHARS) : '';
  const local = zonedParts(options.now, options.timeZone);
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${local.year}-${pad(local.month)}-${pad(local.day)} ${pad(local.hour)}:${pad(local.minute)}`;
  const recent = (options.recent ?? []).map((r, i) => `${i + 1}. ${JSON.stringify({ kind: r.kind, id: r.id, text: r.text, status: r.status ?? null })}`);
  return [
    'You read one message a user sent to a personal assistant and return what it means as ONE JSON object, with no prose and no code fence.',
    '',
    'Shape (keys not listed are not allowed):',
    '{"intent": "create_task|update_task|complete_task|delete_task|query_tasks|query_project|record_decision|record_fact|set_preference|recall|chat",',
    ' "confidence": 0..1,',
    ' "entities": [{"type": "task|project|person|place|decision|fact|date|time", "text": "as written", "valueMs"?: Unix ms or ISO-8601 with offset}],',
    ' "task"?: {"title": "short imperative title", "status": "todo|doing|done|cancelled", "priority": "low|normal|high|urgent", "due": ISO-8601 with offset or null, "duePhrase": "as written" or null, "project": name or null, "stated"?: ["title"|"status"|"priority"|"due"|"project"]},',
    ' "target"?: {"kind": "task|project|decision|fact", "id": an id from the recent records, "phrase": "the words that refer to it", "confidence": 0..1},',
    ' "memory"?: {"text": "the statement", "key"?: "taskSort|timeZone|language|name" or null, "rationale"?: "why" or null},',
    ' "clarification"?: a question in the message\'s language when confidence is below 0.6,',
    ' "language": "zh|en"}',
    '',
    'Rules: "task" for task intents (for update/complete/delete list the changed fields in "stated"); "target" only with an id from the list below; "memory" for decisions, facts, preferences and recall; a date without a time of day is due at 18:00 that day.',
    `Now: ${clock} in time zone ${String(options.timeZone)}.`,
    recent.length > 0 ? `Recent records (most recent first; "the second one" means number 2):\n${recent.join('\n')}` : 'Recent records: none.',
    `Message (JSON string): ${JSON.stringify(message)}`,
  ].join('\n');
}

/** Reads an LLM reply: JSON (a code fence around it is tolerated), the schema, the target id. */
export function parseLlmReply(reply: string, recent: readonly RecentEntity[]): LlmReplyResult {
  let json: unknown;
  try {
    json = JSON.parse(unfence(reply));
  } catch (error) {
    return { ok: false, reason: 'invalid-json', detail: error instanceof Error ? error.message : String(error) };
  }
  const parsed = llmReplySchema.safeParse(json);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return { ok: false, reason: 'schema', detail };
  }
  const target = parsed.data.target;
  if (target && !recent.some((r) => r.id === target.id && r.kind === target.kind)) {
    return { ok: false, reason: 'unknown-target', detail: `target ${target.kind} "${target.id}" is not among the recent records` };
  }
  return { ok: true, extraction: toExtraction(parsed.data) };
}

function unfence(reply: string): string {
  const trimmed = typeof reply === 'string' ? reply.trim() : '';
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(trimmed);
  return fenced ? fenced[1]! : trimmed;
}
