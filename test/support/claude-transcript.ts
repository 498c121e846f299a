/**
 * Hand-built Claude Code transcripts for unit tests: a builder that writes lines the way Claude
 * Code 2.1 does (uuid/parentUuid chain, one content block per assistant line sharing message.id,
 * timestamps), with every field overridable so a test can build exactly the defect it is about.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectClaudeChain, type ClaudeChain } from '../../src/session/claude/chain.js';
import { reconstructClaudeContext, type ClaudeContext, type ContextMessage } from '../../src/session/claude/context.js';
import { scanClaudeSession, type ClaudeIndex } from '../../src/session/claude/scan.js';
import { validateClaudeContext, type ValidationFinding } from '../../src/session/claude/validate.js';

export type Block = Record<string, unknown> & { type: string };
export type Line = Record<string, unknown>;

/** Fields a test may set on any line; anything else given is copied onto the line as is. */
export interface LineOptions {
  uuid?: string;
  /** Parent uuid; default: the uuid of the previous line that has one (null for the first). */
  parentUuid?: string | null;
  /** Milliseconds after the transcript's start; default: one second after the previous line. */
  atMs?: number;
  isSidechain?: boolean;
  /** Extra top-level fields (isMeta, toolUseResult, compactMetadata, ...). */
  extra?: Record<string, unknown>;
}

export const SESSION_ID = '11111111-2222-4333-8444-555555555555';
const START_MS = Date.parse('2025-06-01T10:00:00.000Z');

export const text = (t: string): Block => ({ type: 'text', text: t });
export const toolUse = (id: string, name: string, input: Record<string, unknown> = {}): Block => ({ type: 'tool_use', id, name, input });
export const toolResult = (toolUseId: string, content: unknown = `result of ${toolUseId}`, isError?: boolean): Block => ({
  type: 'tool_result',
  tool_use_id: toolUseId,
  content,
  ...(isError ? { is_error: true } : {}),
});
export const thinking = (t: string, signature = `sig-${t.length}`): Block => ({ type: 'thinking', thinking: t, signature });

export class Transcript {
  readonly lines: Line[] = [];
  #n = 0;
  #lastUuid: string | null = null;
  #lastMs = START_MS - 1000;

  /** A fresh, readable, uuid-shaped id. */
  nextUuid(): string {
    this.#n++;
    return `00000000-0000-4000-8000-${String(this.#n).padStart(12, '0')}`;
  }

  /** The uuid the next line will hang under by default. */
  get cursor(): string | null {
    return this.#lastUuid;
  }
  set cursor(uuid: string | null) {
    this.#lastUuid = uuid;
  }

  /** 1-based line number of the line with `uuid` (its first occurrence). */
  lineOf(uuid: string): number {
    const i = this.lines.findIndex((l) => l.uuid === uuid);
    if (i < 0) throw new Error(`no line with uuid ${uuid}`);
    return i + 1;
  }

  #base(type: string, o: LineOptions): Line {
    const uuid = o.uuid ?? this.nextUuid();
    const ms = o.atMs !== undefined ? START_MS + o.atMs : this.#lastMs + 1000;
    this.#lastMs = ms;
    const line: Line = {
      parentUuid: o.parentUuid !== undefined ? o.parentUuid : this.#lastUuid,
      isSidechain: o.isSidechain ?? false,
      userType: 'external',
      cwd: '/home/dev/project',
      sessionId: SESSION_ID,
      version: '2.1.0',
      type,
      uuid,
      timestamp: new Date(ms).toISOString(),
      ...o.extra,
    };
    this.#lastUuid = uuid;
    return line;
  }

  /** A user line; `content` a string or blocks. Returns its uuid. */
  user(content: string | Block[], o: LineOptions = {}): string {
    const line = this.#base('user', o);
    line.message = { role: 'user', content };
    this.lines.push(line);
    return line.uuid as string;
  }

  /** A user line carrying tool results. */
  results(...blocks: Block[]): string {
    return this.user(blocks);
  }

  /** One assistant line (one block of reply `id`). */
  assistant(id: string, content: Block | Block[], o: LineOptions & { model?: string } = {}): string {
    const line = this.#base('assistant', o);
    line.message = {
      id,
      type: 'message',
      role: 'assistant',
      model: o.model ?? 'claude-sonnet-4-5-20250929',
      content: Array.isArray(content) ? content : [content],
      stop_reason: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    this.lines.push(line);
    return line.uuid as string;
  }

  /** A reply written the way Claude Code writes it: one line per block, all sharing `id` (and `model`). */
  reply(id: string, blocks: Block[], o: LineOptions & { model?: string } = {}): string[] {
    return blocks.map((b, i) => this.assistant(id, b, i === 0 ? o : o.model ? { model: o.model } : {}));
  }

  /** An `attachment` line (Claude Code 2.1.x) with this payload. */
  attachment(payload: Record<string, unknown>, o: LineOptions = {}): string {
    const line = this.#base('attachment', o);
    line.attachment = payload;
    this.lines.push(line);
    return line.uuid as string;
  }

  /** The session id every line carries. */
  get sessionId(): string {
    return SESSION_ID;
  }

  /** A system line (stop_hook_summary, local_command, compact_boundary, ...). */
  system(subtype: string, o: LineOptions & { content?: string } = {}): string {
    const line = this.#base('system', o);
    line.subtype = subtype;
    if (o.content !== undefined) line.content = o.content;
    this.lines.push(line);
    return line.uuid as string;
  }

  /** A compact_boundary followed by its summary (a user line); returns both uuids. */
  compact(summary: string, o: LineOptions & { compactMetadata?: Record<string, unknown> } = {}): { boundary: string; summary: string } {
    const boundary = this.system('compact_boundary', {
      ...o,
      parentUuid: o.parentUuid ?? null,
      content: 'Conversation compacted',
      extra: { logicalParentUuid: this.#lastUuid, compactMetadata: { trigger: 'auto', preTokens: 1000, ...o.compactMetadata }, ...o.extra },
    });
    const s = this.user(summary, { extra: { isCompactSummary: true, isVisibleInTranscriptOnly: true } });
    return { boundary, summary: s };
  }

  /** Any line, verbatim (no uuid or chain bookkeeping). */
  raw(line: Line | string): void {
    this.lines.push(typeof line === 'string' ? ({ __raw: line } as Line) : line);
  }

  /** The JSONL text (each line ends with "\n"). */
  text(): string {
    return this.lines.map((l) => (typeof l.__raw === 'string' ? l.__raw : JSON.stringify(l)) + '\n').join('');
  }
}

/** A temp dir removed by `cleanup()`. */
export async function tempDir(prefix = 'ctxvm-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes the transcript into `dir` and returns the path. */
export async function writeTranscript(dir: string, t: Transcript | string, name = `${SESSION_ID}.jsonl`): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof t === 'string' ? t : t.text());
  return path;
}


let fileCounter = 0;

export interface LoadedTranscript {
  file: string;
  index: ClaudeIndex;
  chain: ClaudeChain;
  ctx: ClaudeContext;
  findings: ValidationFinding[];
}

/** Writes the transcript into `dir` and runs scan, chain selection, reconstruction and validation. */
export async function loadTranscript(dir: string, t: Transcript | string): Promise<LoadedTranscript> {
  const file = await writeTranscript(dir, t, `t${++fileCounter}.jsonl`);
  const index = await scanClaudeSession(file);
  const ctx = await reconstructClaudeContext(index);
  return { file, index, chain: selectClaudeChain(index), ctx, findings: validateClaudeContext(index, ctx) };
}

/** Role and content of each message (what is sent), without ctxvm's bookkeeping. */
export function sent(messages: ContextMessage[]): { role: string; content: unknown[] }[] {
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

/** The blocks of line `n` (1-based) of a transcript, as written (a string content as one text block). */
export function blocksOfLine(t: Transcript, n: number): Block[] {
  const message = t.lines[n - 1]?.message as { content: string | Block[] } | undefined;
  if (!message) throw new Error(`line ${n} has no message`);
  return typeof message.content === 'string' ? [text(message.content)] : message.content;
}
