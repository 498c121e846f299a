/**
 * Validator for Codex CLI rollouts: the rules the Responses API and Codex's resume impose on the
 * history a rollout yields (docs/resume-model.md §2, §4, §5). It judges what the FILE says —
 * compaction and rollback applied, but none of the repairs Codex would make on its own — so a
 * transform that leaves a defect for Codex to paper over is caught. Each finding names its rule
 * and the file line it is about; warnings do not make a file invalid.
 */
import type { ValidationFinding } from '../driver.js';
import { reconstructCodexContext, type CodexContext } from './context.js';
import { scanCodexSession, type CodexIndex } from './scan.js';
import { isCallType, isModelOutput, isOutputType, type CodexContentBlock } from './types.js';

export type { ValidationFinding };
export type FindingSeverity = ValidationFinding['severity'];

/** Names and meanings of the rules, for `--help` and docs. */
export const CODEX_RULES: Readonly<Record<string, string>> = {
  'json-line': 'every line is a JSON object',
  'session-meta-first': 'the first line is a session_meta line carrying payload.id (Codex finds and resumes the session by it)',
  'call-without-output': 'every call is answered by a later output with its call_id (one left open in the last model response is a warning: Codex answers it "aborted")',
  'output-without-call': 'every output answers a call that comes before it (Codex drops orphan outputs)',
  'duplicate-call-id': 'a call_id names one call and is answered once',
  'empty-content': 'every message has content blocks and no empty text block',
  'reasoning-encrypted': 'reasoning items keep their encrypted_content when the session has it (Codex sends null, which the API cannot resolve)',
  'model-provider': 'Codex resumes a rollout only with the model provider it recorded: one other than openai must be configured where it is resumed (warning)',
  'unknown-line-type': 'a top-level line type ctxvm does not know: kept verbatim (warning)',
};

/**
 * Codex 0.169.0 refuses to resume a rollout whose `model_provider` is neither defined in the
 * config nor the configured one ("This chat uses model provider “codex”, which is no longer
 * configured"; for a built-in one such as ollama: "Cannot change this thread's model provider");
 * `openai` (the default) or no recorded provider resume (E: Z-F-provider-*, Z-V-provider-openai).
 */
const DEFAULT_MODEL_PROVIDER = 'openai';

export function validateCodexContext(index: CodexIndex, ctx: CodexContext): ValidationFinding[] {
  const findings: ValidationFinding[] = [];
  const add = (rule: string, line: number, message: string, severity: FindingSeverity = 'error') => findings.push({ rule, line, message, severity });

  for (const bad of index.badLines) add('json-line', bad.line, bad.message);

  const first = index.lines[0];
  if (index.firstLine === 0) add('session-meta-first', 0, 'the file has no lines: a rollout starts with a session_meta line');
  else if (!first || first.line !== index.firstLine || first.kind !== 'session_meta') {
    add('session-meta-first', index.firstLine, `the first line is ${first && first.line === index.firstLine ? `a ${first.kind === 'other' ? (first.type ?? 'untyped') : first.kind} line` : 'not JSON'}, expected session_meta`);
  } else if (!first.sessionId) add('session-meta-first', first.line, 'the session_meta line has no payload.id');

  const provider = index.modelProvider;
  if (first?.kind === 'session_meta' && provider !== undefined && provider !== DEFAULT_MODEL_PROVIDER) {
    add(
      'model-provider',
      first.line,
      `the rollout was recorded with model provider ${JSON.stringify(provider)}: Codex resumes it only where that provider is configured (config.toml [model_providers.${provider}], selected as model_provider); elsewhere \`codex resume\` refuses it and sends nothing`,
      'warning',
    );
  }
  for (const [type, seen] of index.unknownTypes ?? []) {
    add('unknown-line-type', seen.firstLine, `line type ${JSON.stringify(type)} (${seen.count} line${seen.count === 1 ? '' : 's'}) is not known to ctxvm; kept verbatim`, 'warning');
  }

  const calls = new Map<string, number>(); // call_id → line of the call
  const answered = new Map<string, number>(); // call_id → line of its output
  const encryptedInSession = ctx.history.some((x) => x.item.type === 'reasoning' && typeof x.item.encrypted_content === 'string' && x.item.encrypted_content.length > 0);

  for (const { item, line } of ctx.history) {
    const id = typeof item.call_id === 'string' ? item.call_id : undefined;
    if (isCallType(item.type) && id !== undefined) {
      if (calls.has(id)) add('duplicate-call-id', line, `call_id ${id} was already used by the call at line ${calls.get(id)}`);
      else calls.set(id, line);
    } else if (isOutputType(item.type) && id !== undefined) {
      if (!calls.has(id)) add('output-without-call', line, `${item.type} for ${id} answers no earlier call (Codex drops it)`);
      else if (answered.has(id)) add('duplicate-call-id', line, `call ${id} was already answered at line ${answered.get(id)}`);
      answered.set(id, line);
    } else if (item.type === 'message') {
      const content = item.content;
      if (!Array.isArray(content) || content.length === 0) add('empty-content', line, `${String(item.role ?? 'message')} message has no content blocks`);
      else {
        for (const b of content as CodexContentBlock[]) {
          if (b && typeof b === 'object' && 'text' in b && (typeof b.text !== 'string' || b.text.length === 0)) {
            add('empty-content', line, `${String(item.role ?? 'message')} message has an empty ${String(b.type ?? 'text')} block`);
            break;
          }
        }
      }
    } else if (item.type === 'reasoning' && encryptedInSession) {
      const hasSummary = Array.isArray(item.summary) && item.summary.length > 0;
      const enc = item.encrypted_content;
      if (hasSummary && (typeof enc !== 'string' || enc.length === 0)) {
        add('reasoning-encrypted', line, 'reasoning item without its encrypted_content while the session has it elsewhere: drop the whole item instead');
      }
    }
  }

  // A call is answered by an output after it. One left open is an error when the conversation
  // went on (a later model response or a message follows); in the final model response it is a
  // warning: the session ended while it ran, and Codex answers it "aborted" on resume.
  const lastOutput = new Map<string, number>();
  let lastMessage = -1;
  let lastRunStart = -1;
  ctx.history.forEach((x, i) => {
    const { type, role, call_id: id } = x.item;
    if (isOutputType(type) && typeof id === 'string') lastOutput.set(id, i);
    if (type === 'message') lastMessage = i;
    const prev = ctx.history[i - 1]?.item;
    if (isModelOutput(type, role) && !(prev && isModelOutput(prev.type, prev.role))) lastRunStart = i;
  });
  ctx.history.forEach((x, i) => {
    const id = x.item.call_id;
    if (!isCallType(x.item.type) || typeof id !== 'string' || (lastOutput.get(id) ?? -1) > i) return;
    if (i < lastRunStart || lastMessage > i) add('call-without-output', x.line, `${x.item.type} ${id} is never answered although the conversation goes on (Codex answers it "aborted")`);
    else add('call-without-output', x.line, `${x.item.type} ${id} in the last model response has no output; Codex answers it "aborted" on resume`, 'warning');
  });
  return findings.sort((a, b) => a.line - b.line);
}

export function isValid(findings: ValidationFinding[]): boolean {
  return !findings.some((f) => f.severity === 'error');
}

/** Scans, reconstructs and validates a rollout file. */
export async function validateCodexFile(file: string, options: { signal?: AbortSignal } = {}): Promise<{ index: CodexIndex; context: CodexContext; findings: ValidationFinding[]; valid: boolean }> {
  const index = await scanCodexSession(file, options);
  const context = await reconstructCodexContext(index, options);
  const findings = validateCodexContext(index, context);
  return { index, context, findings, valid: isValid(findings) };
}

/**
 * A trim check (`CodexTrimInput.check`): the error findings of a file as "line N: rule: message",
 * empty when the file is valid.
 */
export async function codexErrorFindings(file: string): Promise<string[]> {
  const { findings } = await validateCodexFile(file);
  return findings.filter((f) => f.severity === 'error').map((f) => `line ${f.line}: ${f.rule}: ${f.message}`);
}
