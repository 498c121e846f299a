/**
 * Test helpers for Codex rollouts, exported for users' own tests: a builder for small rollouts
 * and a finder for the real rollouts of the shared corpus.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Builds a rollout line by line; `toString()` gives the JSONL text (each line ends in "\n"). */
export class RolloutBuilder {
  readonly lines: Record<string, unknown>[] = [];
  #ms: number;
  #calls = 0;

  constructor(
    readonly sessionId = '0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000',
    startMs = Date.UTC(2025, 8, 26, 12, 0, 0),
  ) {
    this.#ms = startMs;
  }

  #ts(): string {
    this.#ms += 1000;
    return new Date(this.#ms).toISOString();
  }

  /** Any line: `{timestamp, type, payload}` plus extra top-level fields. */
  line(type: string, payload: unknown, extra: Record<string, unknown> = {}): this {
    this.lines.push({ timestamp: this.#ts(), type, payload, ...extra });
    return this;
  }

  item(payload: Record<string, unknown>): this {
    return this.line('response_item', payload);
  }

  meta(payload: Record<string, unknown> = {}): this {
    return this.line('session_meta', { id: this.sessionId, timestamp: new Date(this.#ms).toISOString(), cwd: '/work/demo', originator: 'codex_cli_rs', cli_version: '0.72.0', instructions: null, ...payload });
  }

  turnContext(model = 'gpt-5.1-codex'): this {
    return this.line('turn_context', { cwd: '/work/demo', approval_policy: 'never', sandbox_policy: { type: 'danger-full-access' }, model, effort: 'medium', summary: 'auto' });
  }

  message(role: 'user' | 'assistant' | 'developer', text: string): this {
    return this.item({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });
  }

  /** A typed prompt: the user message item and its `user_message` event. */
  user(text: string): this {
    this.message('user', text);
    return this.event('user_message', { message: text, images: [] });
  }

  assistant(text: string): this {
    this.message('assistant', text);
    return this.event('agent_message', { message: text });
  }

  environment(cwd = '/work/demo'): this {
    return this.message('user', `<environment_context>\n  <cwd>${cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>`);
  }

  /** A reasoning item (and its agent_reasoning event); `encrypted: false` leaves the field out. */
  reasoning(summary: string, encrypted: string | null | false = `gAAAAAB${'x'.repeat(120)}`): this {
    const payload: Record<string, unknown> = { type: 'reasoning', summary: [{ type: 'summary_text', text: summary }], content: null };
    if (encrypted !== false) payload.encrypted_content = encrypted;
    this.event('agent_reasoning', { text: summary });
    return this.item(payload);
  }

  /** A function_call; returns its call_id through `lastCallId`. */
  call(name: string, args: Record<string, unknown>, callId = `call_${++this.#calls}`): this {
    this.lastCallId = callId;
    return this.item({ type: 'function_call', name, arguments: JSON.stringify(args), call_id: callId });
  }

  output(output: string | unknown[], callId = this.lastCallId): this {
    return this.item({ type: 'function_call_output', call_id: callId, output });
  }

  /** A shell_command call and its output ("Exit code: N ... Output:"). */
  shell(command: string, stdout: string, exitCode = 0): this {
    this.call('shell_command', { command, workdir: '/work/demo' });
    return this.output(`Exit code: ${exitCode}\nWall time: 0 seconds\nOutput:\n${stdout}`);
  }

  customCall(name: string, input: string, callId = `call_${++this.#calls}`): this {
    this.lastCallId = callId;
    return this.item({ type: 'custom_tool_call', status: 'completed', call_id: callId, name, input });
  }

  customOutput(output: string, callId = this.lastCallId): this {
    return this.item({ type: 'custom_tool_call_output', call_id: callId, output });
  }

  event(type: string, payload: Record<string, unknown> = {}): this {
    return this.line('event_msg', { type, ...payload });
  }

  /**
   * A token_count event. Without `usage`, one with running totals only (no `last_token_usage`,
   * so no request is recorded); with it, the call that just finished as Codex logs it.
   */
  tokenCount(usage?: { inputTokens: number; reasoningTokens?: number; outputTokens?: number }): this {
    if (!usage) return this.event('token_count', { info: { total_token_usage: { input_tokens: 3395, output_tokens: 32, total_tokens: 3427 } }, rate_limits: { primary: { used_percent: 6.0, window_minutes: 300 } } });
    const output = (usage.outputTokens ?? 20) + (usage.reasoningTokens ?? 0);
    this.#totalTokens += usage.inputTokens + output;
    const last = { input_tokens: usage.inputTokens, cached_input_tokens: 0, output_tokens: output, reasoning_output_tokens: usage.reasoningTokens ?? 0, total_tokens: usage.inputTokens + output };
    return this.event('token_count', { info: { total_token_usage: { total_tokens: this.#totalTokens }, last_token_usage: last, model_context_window: 272000 }, rate_limits: null });
  }

  /** The last token_count again, as Codex writes it at the start of the next turn. */
  repeatTokenCount(): this {
    const last = [...this.lines].reverse().find((l) => l.type === 'event_msg' && (l.payload as { type?: string }).type === 'token_count');
    if (!last) throw new Error('repeatTokenCount: no token_count yet');
    return this.line('event_msg', last.payload);
  }

  #totalTokens = 0;

  ghostSnapshot(): this {
    return this.item({ type: 'ghost_snapshot', ghost_commit: { id: 'a'.repeat(40), parent: 'b'.repeat(40), preexisting_untracked_files: [], preexisting_untracked_dirs: [] } });
  }

  compacted(message: string, replacementHistory?: Record<string, unknown>[]): this {
    return this.line('compacted', { message, ...(replacementHistory ? { replacement_history: replacementHistory } : {}) });
  }

  lastCallId = '';

  toString(): string {
    return this.lines.map((l) => JSON.stringify(l) + '\n').join('');
  }
}

/** Root of the shared corpus (`../shared/corpus` from the repository root), or undefined. */
export function sharedCorpusDir(repoRoot: string): string | undefined {
  const dir = resolve(repoRoot, '..', 'shared', 'corpus');
  return existsSync(dir) ? dir : undefined;
}

/** Every Codex rollout of the shared corpus, sorted by path; empty when the corpus is absent. */
export function codexCorpusRollouts(repoRoot: string): string[] {
  const corpus = sharedCorpusDir(repoRoot);
  if (!corpus) return [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/^rollout-.*\.jsonl$/.test(name)) out.push(p);
    }
  };
  const root = join(corpus, 'sessions', 'codex');
  if (existsSync(root)) walk(root);
  return out.sort();
}
