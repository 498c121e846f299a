/** `ctxvm memory extract|ingest|context|tasks|history` (and export|import|compact from memory-cold.ts). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ParseError, UsageError } from '../../errors.js';
import { settleTentative, type Extraction } from '../../memory/extraction.js';
import type { IngestTurn } from '../../memory/manager.js';
import type { TaskStatus } from '../../memory/model.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { systemTimeZone, withMemoryServices } from '../memory-services.js';
import { formatInt, table } from '../format.js';
import { formatLocalTime, zoneLabel } from '../../memory/format-time.js';
import { parseInstant, parseTimeZoneOption, positiveInt, requireUser } from '../memory-options.js';
import { registerMemoryCold } from './memory-cold.js';

const STATUSES: readonly TaskStatus[] = ['todo', 'doing', 'done', 'cancelled'];
/** Help of the `--tz` of commands that print a user's times. */
export const VIEW_TZ_HELP = "show times in this zone: IANA name, +08:00, or minutes east of UTC (default: the user's stored zone, else this machine's)";

/** The CLI's JSON view of one extraction (DESIGN.md contract). */
export function extractionJson(x: Extraction, id?: string) {
  return {
    ...(id !== undefined ? { id } : {}),
    intent: x.intent,
    confidence: x.confidence,
    language: x.language,
    entities: x.entities.map((e) => ({ type: e.type, text: e.text, ...(e.valueMs !== undefined ? { value: new Date(e.valueMs).toISOString() } : {}) })),
    ...(x.task
      ? {
          task: {
            title: x.task.title,
            status: x.task.status,
            priority: x.task.priority,
            due: x.task.due === null ? null : new Date(x.task.due).toISOString(),
            duePhrase: x.task.duePhrase,
            project: x.task.project,
          },
        }
      : {}),
    ...(x.target ? { target: x.target } : {}),
    ...(x.memory ? { memory: x.memory } : {}),
    ...(x.clarification ? { clarification: x.clarification } : {}),
  };
}

export function registerMemory(program: Command, ctx: CommandContext): void {
  const memory = program.command('memory').description('the memory engine: extract tasks and facts from messages, store them per user, rebuild prompts from them');

  withJson(memory.command('extract'))
    .description('read one message (or a JSON-lines file of {id, text}) into intent, entities and task fields; stores nothing')
    .argument('[text]', 'the message')
    .option('--file <file>', 'JSON lines {id, text}; prints one JSON array')
    .option('--now <iso>', 'reference time for relative dates (default: now)')
    .option('--tz <zone>', 'time zone: IANA name, +08:00, or minutes east of UTC (default: this machine\'s)')
    .action(async (text: string | undefined, opts: { json?: boolean; file?: string; now?: string; tz?: string }) => {
      if ((text === undefined) === (opts.file === undefined)) throw new UsageError('give either the message text or --file F', { hint: 'e.g. ctxvm memory extract "记得下午三点开会"' });
      const now = opts.now !== undefined ? parseInstant(opts.now, '--now') : Date.now();
      const timeZone = opts.tz !== undefined ? parseTimeZoneOption(opts.tz) : systemTimeZone();
      const { createRuleExtractor } = await import('../../memory/extract/extract.js');
      const extractor = createRuleExtractor();
      if (text !== undefined) {
        const x = settleTentative(extractor.extract(text, { now, timeZone }));
        if (opts.json) return ctx.printJson(extractionJson(x));
        return ctx.print(describeExtraction(x, timeZone));
      }
      const { readJsonl } = await import('../../core/jsonl.js');
      const file = resolve(ctx.io.cwd, opts.file!);
      const out: ReturnType<typeof extractionJson>[] = [];
      for await (const rec of readJsonl<{ id?: unknown; text?: unknown }>(file)) {
        const v = rec.value;
        if (!v || typeof v !== 'object' || typeof v.text !== 'string') {
          throw new ParseError({ file, line: rec.raw.line, byteOffset: rec.raw.byteOffset }, 'expected an object {"id": …, "text": "…"}', { hint: 'one JSON object per line with a string "text"' });
        }
        out.push(extractionJson(settleTentative(extractor.extract(v.text, { now, timeZone })), v.id === undefined ? String(rec.raw.line) : String(v.id)));
      }
      if (opts.json) return ctx.printJson(out);
      ctx.print(table(['id', 'intent', 'conf', 'title', 'due'], out.map((x) => [x.id ?? '', x.intent, x.confidence.toFixed(2), x.task?.title ?? '', x.task?.due ?? ''])));
    });

  withJson(memory.command('ingest'))
    .description('store raw turns for a user and extract memory from the user turns (JSON lines {id?, role, speaker?, text, at?})')
    .requiredOption('--user <id>', 'user id')
    .option('--file <file>', 'JSON-lines file (default: standard input)')
    .option('--no-extract', 'only archive the turns; do not extract tasks and facts')
    .action(async (opts: { user: string; file?: string; json?: boolean; extract: boolean }) => {
      const userId = requireUser(opts.user);
      const { readJsonl, parseJsonlLines, linesFromChunks } = await import('../../core/jsonl.js');
      const name = opts.file ? resolve(ctx.io.cwd, opts.file) : '<stdin>';
      const records = opts.file ? readJsonl(name) : parseJsonlLines(linesFromChunks(process.stdin as AsyncIterable<Uint8Array>, { name }), name);
      const turns: IngestTurn[] = [];
      for await (const rec of records) turns.push(toIngestTurn(rec.value, name, rec.raw.line, rec.raw.byteOffset));
      await withMemoryServices(ctx, {}, async (services) => {
        const result = await services.manager.ingest(userId, turns, { extract: opts.extract });
        if (opts.json) return ctx.printJson({ user: userId, ...result });
        const intents = Object.entries(result.byIntent).map(([k, n]) => `${n} ${k}`).join(', ');
        ctx.print(`ingested ${formatInt(result.turns)} turns for ${userId}: ${formatInt(result.added)} new, ${formatInt(result.applied)} memory changes${intents ? ` (${intents})` : ''}`);
      });
    });

  withJson(memory.command('context'))
    .description('rebuild the six-layer prompt context for a question, within a token budget')
    .requiredOption('--user <id>', 'user id')
    .argument('<query>', 'the question or message to build the context for')
    .option('--budget <tokens>', 'token budget (default 2000)', positiveInt('--budget'))
    .option('--now <iso>', 'reference time (default: now)')
    .option('--tz <zone>', VIEW_TZ_HELP)
    .action(async (query: string, opts: { user: string; budget?: number; json?: boolean; now?: string; tz?: string }) => {
      const userId = requireUser(opts.user);
      const timeZone = opts.tz !== undefined ? parseTimeZoneOption(opts.tz) : undefined;
      await withMemoryServices(ctx, opts.budget !== undefined ? { budgetTokens: opts.budget } : {}, async (services) => {
        const context = await services.manager.buildContext(userId, query, {
          ...(opts.now !== undefined ? { now: parseInstant(opts.now, '--now') } : {}),
          ...(timeZone !== undefined ? { timeZone } : {}),
        });
        if (opts.json) return ctx.printJson(context);
        ctx.print(context.text);
        ctx.note(
          `\n${formatInt(context.tokens)} / ${formatInt(context.budgetTokens)} tokens; ` +
            context.layers.map((l) => `${l.name} ${l.tokens}`).join(', ') +
            (context.dropped.length ? `; dropped ${context.dropped.length}` : ''),
        );
      });
    });

  withJson(memory.command('tasks'))
    .description("list a user's tasks")
    .requiredOption('--user <id>', 'user id')
    .option('--status <status>', `only this status: ${STATUSES.join(', ')} (comma-separated for several)`)
    .option('--tz <zone>', VIEW_TZ_HELP)
    .action(async (opts: { user: string; status?: string; json?: boolean; tz?: string }) => {
      const userId = requireUser(opts.user);
      const viewZone = opts.tz !== undefined ? parseTimeZoneOption(opts.tz) : undefined;
      const status = opts.status?.split(',').map((s) => s.trim()) as TaskStatus[] | undefined;
      for (const s of status ?? []) if (!STATUSES.includes(s)) throw new UsageError(`--status: unknown status ${JSON.stringify(s)}`, { hint: `use one of ${STATUSES.join(', ')}` });
      await withMemoryServices(ctx, {}, async (services) => {
        const store = services.manager.user(userId);
        const [tasks, projects, zone] = await Promise.all([store.listTasks(status ? { status } : {}), store.listProjects(), viewZone ?? services.manager.timeZoneOf(userId)]);
        const projectName = new Map(projects.map((p) => [p.id, p.name]));
        const rows = tasks.map((t) => ({ id: t.id, title: t.title, status: t.status, priority: t.priority, due: t.dueAtMs === null ? null : new Date(t.dueAtMs).toISOString(), project: t.projectId ? (projectName.get(t.projectId) ?? null) : null }));
        if (opts.json) return ctx.printJson(rows);
        if (!rows.length) return ctx.print(`no tasks for ${userId}`);
        ctx.print(table(['id', 'status', 'priority', `due (${zoneLabel(zone)})`, 'title', 'project'], tasks.map((t, i) => [t.id, t.status, t.priority, t.dueAtMs === null ? '' : formatLocalTime(t.dueAtMs, zone), t.title, rows[i]!.project ?? ''])));
      });
    });

  withJson(memory.command('history'))
    .description("a user's memory change history, newest first (old and new values)")
    .requiredOption('--user <id>', 'user id')
    .option('--record <id>', 'only changes of this task, project, decision or fact')
    .option('--limit <n>', 'at most this many entries (default 50)', positiveInt('--limit'))
    .action(async (opts: { user: string; record?: string; limit?: number; json?: boolean }) => {
      const userId = requireUser(opts.user);
      await withMemoryServices(ctx, {}, async (services) => {
        const entries = await services.manager.user(userId).history({ ...(opts.record ? { recordId: opts.record } : {}), limit: opts.limit ?? 50 });
        if (opts.json) return ctx.printJson(entries);
        if (!entries.length) return ctx.print(`no history for ${userId}`);
        ctx.print(table(['time', 'kind', 'record', 'field', 'old', 'new', 'turn'], entries.map((e) => [new Date(e.atMs).toISOString(), e.kind, e.recordId, e.field === '*' ? (e.oldValue === null ? 'created' : e.newValue === null ? 'deleted' : '*') : e.field, historyCell(e.oldValue), historyCell(e.newValue), e.turnId ?? ''])));
        ctx.note('(whole values: --json)');
      });
    });

  registerMemoryCold(memory, ctx); // export, import, compact (memory-cold.ts)
}

/**
 * A history value as a table cell: a whole record (created or deleted) by its title or text,
 * anything else as it is, both cut to a width a terminal holds. `--json` has the full values.
 */
export function historyCell(value: string | null | undefined, max = 48): string {
  if (value === null || value === undefined) return '';
  let text = value;
  if (value.startsWith('{')) {
    try {
      const v = JSON.parse(value) as Record<string, unknown>;
      const name = [v.title, v.text, v.name, v.value, v.key].find((x) => typeof x === 'string' && x !== '') as string | undefined;
      if (name !== undefined) text = typeof v.status === 'string' ? `${name} (${v.status})` : name;
    } catch {
      // not JSON after all: shown as it is
    }
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function toIngestTurn(value: unknown, file: string, line: number, byteOffset: number): IngestTurn {
  const fail = (detail: string) => new ParseError({ file, line, byteOffset }, detail, { hint: 'each line: {"id"?: "…", "role": "user"|"assistant"|"system", "speaker"?: "…", "text": "…", "at"?: "ISO-8601"}' });
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw fail('expected a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v.text !== 'string') throw fail('"text" must be a string');
  const role = v.role ?? 'user';
  if (role !== 'user' && role !== 'assistant' && role !== 'system') throw fail(`"role" must be user, assistant or system, got ${JSON.stringify(role)}`);
  if (v.id !== undefined && typeof v.id !== 'string' && typeof v.id !== 'number') throw fail('"id" must be a string');
  if (v.speaker !== undefined && v.speaker !== null && typeof v.speaker !== 'string') throw fail('"speaker" must be a string');
  let atMs: number | undefined;
  if (v.at !== undefined) {
    atMs = typeof v.at === 'string' ? Date.parse(v.at) : NaN;
    if (!Number.isFinite(atMs)) throw fail(`"at" must be an ISO-8601 time, got ${JSON.stringify(v.at)}`);
  }
  return {
    ...(v.id !== undefined ? { id: String(v.id) } : {}),
    role,
    ...(typeof v.speaker === 'string' ? { speaker: v.speaker } : {}),
    text: v.text,
    ...(atMs !== undefined ? { atMs } : {}),
    ...(typeof v.session === 'string' ? { sessionId: v.session } : {}),
  };
}

function describeExtraction(x: Extraction, zone: import('../../core/time-zone.js').TimeZone): string {
  const lines = [`intent: ${x.intent} (confidence ${x.confidence.toFixed(2)}, ${x.language})`];
  if (x.task) {
    lines.push(`task: ${x.task.title}`, `  status ${x.task.status}, priority ${x.task.priority}${x.task.project ? `, project ${x.task.project}` : ''}`);
    if (x.task.due !== null) lines.push(`  due ${formatLocalTime(x.task.due, zone)} ${zoneLabel(zone)} ("${x.task.duePhrase ?? ''}")`);
  }
  if (x.target) lines.push(`refers to: ${x.target.kind} ${x.target.id} ("${x.target.phrase}")`);
  if (x.memory) lines.push(`memory: ${x.memory.text}${x.memory.key ? ` [${x.memory.key}=${x.memory.value ?? ''}]` : ''}`);
  if (x.entities.length) lines.push(`entities: ${x.entities.map((e) => `${e.type}:${e.text}`).join(', ')}`);
  if (x.clarification) lines.push(`would ask: ${x.clarification}`);
  return lines.join('\n');
}
