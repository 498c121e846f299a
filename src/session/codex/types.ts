/**
 * Loose shapes of Codex CLI rollout lines (`{timestamp, type, payload}`, 0.40 to 0.169 layouts)
 * and the small pure helpers every Codex module shares. Only the fields ctxvm reads are typed;
 * everything else is carried through untouched (see ../shared/formats.md and
 * docs/resume-model.md §2).
 */

/** One rollout line as parsed JSON. */
export interface CodexLine {
  timestamp?: string;
  type?: string;
  payload?: unknown;
  /** ctxvm's own restore annotation on lines it changed (see trim/annotation.ts). */
  ctxvm?: unknown;
  [key: string]: unknown;
}

/** A `response_item` payload (also the items of `compacted.replacement_history`). */
export interface CodexItem {
  type: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: unknown;
  input?: unknown;
  output?: unknown;
  action?: unknown;
  summary?: unknown;
  encrypted_content?: unknown;
  [key: string]: unknown;
}

/** A content block of a `message` item (`input_text`, `output_text`, `input_image`, ...). */
export interface CodexContentBlock {
  type?: string;
  text?: unknown;
  image_url?: unknown;
  [key: string]: unknown;
}

/** Line kinds ctxvm distinguishes. Anything else is `other` and passes through. */
export type CodexLineKind = 'session_meta' | 'turn_context' | 'response_item' | 'event_msg' | 'compacted' | 'other';

const KNOWN_KINDS = new Set<string>(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted']);

/**
 * Top-level line types Codex writes that are not history (snapshots of AGENTS.md and the
 * environment, inter-agent metadata; ../shared/formats.md "Seen in the wild"). They pass through a
 * trim untouched; any other unknown type is reported (`unknown-line-type`).
 */
export const CODEX_PASSTHROUGH_LINE_TYPES: ReadonlySet<string> = new Set(['world_state', 'inter_agent_communication_metadata']);

export function codexLineKind(line: CodexLine): CodexLineKind {
  const t = line.type;
  return typeof t === 'string' && KNOWN_KINDS.has(t) ? (t as CodexLineKind) : 'other';
}

/** Item types that carry a call (paired with an output by `call_id`). */
export const CALL_TYPES: ReadonlySet<string> = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);
/** Item types that answer a call. */
export const OUTPUT_TYPES: ReadonlySet<string> = new Set(['function_call_output', 'custom_tool_call_output']);

export function isCallType(type: string | undefined): boolean {
  return type !== undefined && CALL_TYPES.has(type);
}

export function isOutputType(type: string | undefined): boolean {
  return type !== undefined && OUTPUT_TYPES.has(type);
}

/** The output type Codex pairs with a call type (`custom_tool_call` → `custom_tool_call_output`). */
export function outputTypeFor(callType: string): 'function_call_output' | 'custom_tool_call_output' {
  return callType === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output';
}

/** Item types the model produces in a response (a run of them is one model round trip). */
const MODEL_OUTPUT_TYPES = new Set(['reasoning', 'function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call', 'image_generation_call']);

export function isModelOutput(type: string | undefined, role: string | undefined): boolean {
  if (type === 'message') return role === 'assistant';
  return type !== undefined && MODEL_OUTPUT_TYPES.has(type);
}

/**
 * Prefixes of Codex's "contextual" user messages: injected context, not typed by the person.
 * They do not count as user turns (rollback) and a compaction without replacement history drops
 * them (resume-model.md §2.1).
 */
export const CODEX_CONTEXTUAL_PREFIXES: readonly string[] = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<user_shell_command>',
  '<turn_aborted>',
  '<subagent_notification>',
];

/** A user message that counts as a user turn: some block is not contextual text. */
export function isUserTurnItem(item: CodexItem): boolean {
  if (item.type !== 'message' || item.role !== 'user') return false;
  const blocks = Array.isArray(item.content) ? (item.content as CodexContentBlock[]) : [];
  return !blocks.every((b) => typeof b?.text === 'string' && CODEX_CONTEXTUAL_PREFIXES.some((p) => (b.text as string).trimStart().startsWith(p)));
}

/** Parses a JSON string into an object, or undefined. */
export function parseJsonObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string' || text.length === 0 || (text[0] !== '{' && text.trimStart()[0] !== '{')) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'fish', 'pwsh', 'powershell', 'powershell.exe', 'pwsh.exe', 'cmd', 'cmd.exe']);

/** The command line a shell call runs: `["bash","-lc","ls"]` → `ls`; a string stays as it is. */
export function commandText(command: unknown): string | undefined {
  if (typeof command === 'string') return command || undefined;
  if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string')) return undefined;
  const parts = command as string[];
  const program = (parts[0]!.split(/[\\/]/).pop() ?? '').toLowerCase();
  if (SHELLS.has(program) && parts.length >= 2) return parts[parts.length - 1];
  return parts.join(' ');
}

/** Files a patch touches, e.g. "update README.md, add src/a.ts" (apply_patch grammar). */
export function patchTargets(patch: string): string | undefined {
  const files: string[] = [];
  const re = /^\*\*\* (Add|Update|Delete) File: (.+)$/gm;
  for (let m = re.exec(patch); m; m = re.exec(patch)) files.push(`${m[1]!.toLowerCase()} ${m[2]!.trim()}`);
  if (files.length === 0) return undefined;
  return files.length <= 4 ? files.join(', ') : `${files.slice(0, 4).join(', ')} and ${files.length - 4} more`;
}

/** The argument that identifies a call to a person (command, path, query), kept verbatim in stubs. */
export function codexToolTarget(name: string | undefined, args: Record<string, unknown> | undefined, rawInput?: string): string | undefined {
  if (typeof rawInput === 'string') return patchTargets(rawInput);
  if (!args) return undefined;
  const pick = (...keys: string[]) => {
    for (const k of keys) {
      const v = args[k];
      if (typeof v === 'string' && v) return v;
    }
    return undefined;
  };
  const cmd = commandText(args.command) ?? commandText(args.cmd);
  if (cmd) return cmd;
  if (typeof args.input === 'string' && (name === 'apply_patch' || args.input.startsWith('*** Begin Patch'))) return patchTargets(args.input);
  const pattern = pick('pattern');
  if (pattern) return [pattern, pick('path', 'dir_path')].filter(Boolean).join(' in ');
  return pick('file_path', 'path', 'dir_path', 'url', 'query', 'q', 'description');
}

/** Read-only file viewers whose repeated identical invocation supersedes the earlier output. */
const READ_COMMAND = /^\s*(?:cat|nl|head|tail|bat|less|more|type|sed\s+-n|get-content|gc)\s/i;
/** Compound or mutating shell syntax: such a command is not a pure read. */
const SHELL_CONTROL = /[;&|><`]|\$\(/;

/**
 * Identity of a pure file read, or undefined: a `read_file` call (path and range) or a single
 * shell viewer command (`cat f`, `sed -n '1,80p' f`, `Get-Content -Raw f`) without pipes or
 * redirections. A later call with the same identity supersedes the earlier one's output.
 */
export function codexReadKey(name: string | undefined, args: Record<string, unknown> | undefined): string | undefined {
  if (!args) return undefined;
  if (name === 'read_file' && typeof args.file_path === 'string') {
    return `read_file:${args.file_path}:${String(args.offset ?? '')}:${String(args.limit ?? '')}:${String(args.mode ?? '')}`;
  }
  const cmd = commandText(args.command) ?? commandText(args.cmd);
  if (!cmd || !READ_COMMAND.test(cmd) || SHELL_CONTROL.test(cmd.replace(/'[^']*'|"[^"]*"/g, ''))) return undefined;
  const dir = typeof args.workdir === 'string' ? args.workdir : '';
  return `shell:${dir}:${cmd.trim()}`;
}

/** Exit status recorded in a call output: `{"metadata":{"exit_code":N}}` or a leading "Exit code: N". */
export function outputExitCode(output: unknown): number | undefined {
  if (typeof output !== 'string') return undefined;
  const m = /^Exit code: (-?\d+)/.exec(output);
  if (m) return Number(m[1]);
  const obj = parseJsonObject(output);
  const meta = obj?.metadata as Record<string, unknown> | undefined;
  return typeof meta?.exit_code === 'number' ? meta.exit_code : undefined;
}

/** The text a person reads in a call output: the `output` of a JSON envelope, or the text after "Output:". */
export function outputBodyText(output: string): string {
  const obj = parseJsonObject(output);
  if (obj && typeof obj.output === 'string') return obj.output;
  const m = /^Exit code: -?\d+\n(?:Wall time: [^\n]*\n)?(?:Total output lines: [^\n]*\n)?Output:\n/.exec(output);
  return m ? output.slice(m[0].length) : output;
}

/** Text and images of an output whose `output` is a list of content items (newer Codex). */
export function outputItemsText(output: unknown[]): { text: string; images: number } {
  let text = '';
  let images = 0;
  for (const b of output as CodexContentBlock[]) {
    if (b && typeof b.text === 'string') text += (text ? '\n' : '') + b.text;
    else if (b?.type === 'input_image') images++;
  }
  return { text, images };
}
