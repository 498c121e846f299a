/**
 * The sessions engine's library API: detect the agent of a session file, then validate, analyze,
 * trim, restore and page in — the same calls for Claude Code and Codex files.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl } from '../core/jsonl.js';
import { CtxvmError } from '../errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { createFsObjectStore } from '../store/drivers/objects-fs.js';
import { createMeasurementCounters, createTokenCounter, type TokenCounter } from '../text/tokens.js';
import { cacheScenarios, type CacheScenario } from './cache-model.js';
import { claudeDriver } from './claude/driver.js';
import { detectSessionAgent } from './detect-agent.js';
import { codexDriver } from './codex/driver.js';
import type { AgentContext, AgentKind, TokenCategory } from './context-model.js';
import type { DriverTrimStats, LoadedSession, SessionDriver, ValidationFinding } from './driver.js';
import { invalidOutputError } from './invalid-output.js';
import { priceFor } from './pricing.js';
import { countContextTokens, isCountedText, type TokenBreakdown } from './token-breakdown.js';
import type { IdSource } from './trim/id-object.js';
import { resolvePolicy, type TrimPolicy } from './trim/policy.js';
import { readLoggedContext, type LoggedContext } from './usage-profile.js';

const drivers = new Map<AgentKind, SessionDriver>([
  ['claude', claudeDriver],
  ['codex', codexDriver],
]);

/** Registers (or replaces) the driver for an agent format. */
export function registerSessionDriver(driver: SessionDriver): void {
  drivers.set(driver.agent, driver);
}

/** Tells a Codex rollout from a Claude Code transcript by its first JSON object line (see detect-agent.ts). */
export async function detectAgent(file: string): Promise<AgentKind> {
  return detectSessionAgent(file);
}

export function driverFor(agent: AgentKind): SessionDriver {
  const d = drivers.get(agent);
  if (!d) throw new CtxvmError('E_UNSUPPORTED', `${agent} sessions are not supported in this build`);
  return d;
}

export async function loadSession(file: string): Promise<LoadedSession> {
  return driverFor(await detectAgent(file)).load(file);
}

export interface ValidationReport {
  agent: AgentKind;
  file: string;
  valid: boolean;
  /** Problems that make the file invalid: each with its rule, line and message. */
  errors: Omit<ValidationFinding, 'severity'>[];
  /** Things the agent repairs or tolerates on its own. */
  warnings: Omit<ValidationFinding, 'severity'>[];
  messages: number;
}

const strip = ({ severity: _s, ...f }: ValidationFinding) => f;

export async function validateSession(file: string): Promise<ValidationReport> {
  const s = await loadSession(file);
  const errors = s.findings.filter((f) => f.severity === 'error').map(strip);
  return { agent: s.agent, file, valid: errors.length === 0, errors, warnings: s.findings.filter((f) => f.severity === 'warning').map(strip), messages: s.context.entries.length };
}

export interface SessionServices {
  store: ObjectStore;
  /** Defaults to o200k_base calibrated for the session's model. */
  tokens?: TokenCounter;
}

export interface TrimSessionOptions extends SessionServices {
  input: string;
  output: string;
  policy?: Partial<TrimPolicy>;
  /** Count tokens of the contexts before and after (default true; off for raw throughput). */
  measure?: boolean;
  onProgress?: (bytesDone: number, bytesTotal: number, pass: 1 | 3) => void;
  /**
   * How far the token counts after the trim have come (when measuring), from 0 to 1: the input
   * read in full (up to 0.45), its texts counted (up to 0.9), then the output loaded and counted.
   */
  onCountProgress?: (share: number) => void;
  /** See `DriverTrimInput.idSource` (a branch being trimmed as it is made). */
  idSource?: IdSource;
  signal?: AbortSignal;
}

/** A finding the input already had: repaired by the trim, or carried into the output as it was. */
export interface TrimWarning extends Omit<ValidationFinding, 'severity'> {
  severity: ValidationFinding['severity'];
  repaired: boolean;
}

export interface TrimReport {
  agent: AgentKind;
  /** Model of the session's last reply (when measured). */
  model?: string;
  /** `tokens` and `breakdown` (by category) are of the reconstructed context, when measured. */
  input: { path: string; bytes: number; lines: number; tokens?: number; breakdown?: Record<TokenCategory, number> };
  output: { path: string; bytes: number; lines: number; tokens?: number; breakdown?: Record<TokenCategory, number> };
  /** Share of the context's tokens removed (0..1), on the reconstructed contexts. */
  reduction?: number;
  /** The whole request on resume (system prompt and tools + messages), when the log's usage tells the former. */
  request?: RequestTokens;
  valid: boolean;
  /** Findings the input already had (repaired, or carried as they were); never a reason to refuse. */
  warnings: TrimWarning[];
  /** Line types the trimmer passed through without knowing them (kept verbatim). */
  unknownLineTypes: string[];
  tokenizer?: string;
  pagedOut: Record<string, number>;
  removedLines: number;
  changedLines: number;
  objects: number;
  pagedOutBytes: number;
  /** Holder id of the paged-out objects in the store. */
  holder: string;
}

/** Tokens of the whole request the agent sends on resume, before and after trimming. */
export interface RequestTokens {
  /** The system prompt and tool definitions, read off the log's usage (usage-profile.ts); trimming leaves them alone. */
  systemAndTools: number;
  tokens: number;
  trimmedTokens: number;
  /** Share of the request removed (0..1): smaller than `reduction`, which is of the messages only. */
  reduction: number;
}

function requestTokens(logged: LoggedContext, before: number, after: number): RequestTokens | undefined {
  if (logged.systemAndTools === null) return undefined;
  const tokens = logged.systemAndTools + before;
  const trimmedTokens = logged.systemAndTools + after;
  return { systemAndTools: logged.systemAndTools, tokens, trimmedTokens, reduction: ratioRemoved(tokens, trimmedTokens) };
}

const ratioRemoved = (before: number, after: number) => (before > 0 ? Math.round((1 - after / before) * 10_000) / 10_000 : 0);

function counterFor(services: Pick<SessionServices, 'tokens'>, model: string | undefined): TokenCounter {
  return services.tokens ?? createTokenCounter(model ? { model } : {});
}

/** What identifies a finding across a trim (line numbers change; rule and wording do not). */
function findingKey(f: ValidationFinding): string {
  // a branch gives every line new ids: compare findings by what they say, not which uuid
  return `${f.rule}|${f.message.replace(/\b(line|lines) \d+/g, '$1 N').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')}`;
}

/** Findings of `after` not among those of `before` (as a multiset). */
export function newFindings(before: ValidationFinding[], after: ValidationFinding[]): ValidationFinding[] {
  const left = new Map<string, number>();
  for (const f of before) left.set(findingKey(f), (left.get(findingKey(f)) ?? 0) + 1);
  return after.filter((f) => {
    const n = left.get(findingKey(f)) ?? 0;
    if (n === 0) return true;
    left.set(findingKey(f), n - 1);
    return false;
  });
}

/** A loaded session's findings. */
interface FindingsOf {
  findings: ValidationFinding[];
}

/** Loads a session lean, for its findings only (memory stays flat: driver.ts). */
async function loadFindings(driver: SessionDriver, file: string): Promise<FindingsOf> {
  return { findings: (await driver.load(file, { lean: true })).findings };
}

/**
 * Trims a session file into `output` (atomically), validating the result before it is written: a
 * trim may repair what the input had (reported as warnings), never add a problem of its own.
 */
export async function trimSession(options: TrimSessionOptions): Promise<TrimReport> {
  const agent = await detectAgent(options.input);
  // page-out puts go off this thread: have it ready by the time the first pack is sealed
  options.store.prepare({ offThread: true });
  const driver = driverFor(agent);
  const policy = resolvePolicy(options.policy);
  const measure = options.measure !== false;
  // findings: the driver's own when it finds them, else from lean loads (memory stays flat, driver.ts)
  const own = driver.findsOwnTrimFindings === true;
  let before: FindingsOf | undefined = own ? undefined : await loadFindings(driver, options.input);
  let checked: FindingsOf | undefined;
  const refuse = (inputFindings: ValidationFinding[], outputFindings: ValidationFinding[]) => {
    const added = newFindings(inputFindings, outputFindings).filter((f) => f.severity === 'error');
    // an input that was already invalid is named with its own errors; a valid one means a bug
    if (added.length > 0) throw invalidOutputError({ input: options.input, output: 'trimmed copy', inputFindings, added });
  };
  const check = async (temp: string) => {
    checked = await loadFindings(driver, temp);
    refuse(before!.findings, checked.findings);
    return [];
  };
  const tokens = options.tokens ?? createTokenCounter();
  const stats: DriverTrimStats = await driver.trim({
    input: options.input,
    output: options.output,
    store: options.store,
    policy,
    tokens,
    ...(own ? { judge: refuse } : { check }),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.idSource ? { idSource: options.idSource } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (stats.findings) {
    before = { findings: stats.findings.before };
    checked = { findings: stats.findings.after };
  }
  if (!before) throw new CtxvmError('E_INTERNAL', `the ${agent} trimmer did not report the findings it is meant to find`);
  // the checked temporary file is the output, byte for byte
  const after = checked ?? (await loadFindings(driver, options.output));
  const remaining = new Set(after.findings.map(findingKey));
  const report: TrimReport = {
    agent,
    input: { path: options.input, bytes: stats.inputBytes, lines: stats.inputLines },
    output: { path: options.output, bytes: stats.outputBytes, lines: stats.outputLines },
    valid: !after.findings.some((f) => f.severity === 'error'),
    warnings: before.findings.map((f) => ({ ...f, repaired: !remaining.has(findingKey(f)) })),
    unknownLineTypes: before.findings.filter((f) => f.rule === 'unknown-line-type').map((f) => /^line type "((?:[^"\\]|\\.)*)"/.exec(f.message)?.[1] ?? f.message),
    pagedOut: stats.counters,
    removedLines: stats.removedLines,
    changedLines: stats.changedLines,
    objects: stats.objects,
    pagedOutBytes: stats.pagedOutBytes,
    holder: stats.holder,
  };
  if (measure) {
    // exact counts need the texts: full loads of both files, one at a time, for the numbers only
    options.onCountProgress?.(0);
    // the loaded input is not kept: only its numbers are
    const { model, counted, logged } = await measureFile(driver, options.input, options, options.onCountProgress, stats.loadInput);
    const output = await driver.load(options.output);
    const countedAfter = countContextTokens(output.context, counterFor(options, model));
    options.onCountProgress?.(1);
    const b = counted.tokens;
    const a = countedAfter.tokens;
    if (model) report.model = model;
    report.input.tokens = b;
    report.input.breakdown = counted.breakdown;
    report.output.tokens = a;
    report.output.breakdown = countedAfter.breakdown;
    report.reduction = ratioRemoved(b, a);
    const request = requestTokens(logged, b, a);
    if (request) report.request = request;
    report.tokenizer = counted.method;
  }
  return report;
}

/**
 * Loads `file` in full and counts it: each text is counted once for both the breakdown and the
 * usage profile. The counters, which remember every text they counted, do not outlive the call;
 * `onProgress` gets a share of the work (see `TrimSessionOptions.onCountProgress`).
 */
async function measureFile(
  driver: SessionDriver,
  file: string,
  services: Pick<SessionServices, 'tokens'>,
  onProgress?: (share: number) => void,
  load: NonNullable<DriverTrimStats['loadInput']> = (o) => driver.load(file, o),
): Promise<{ model: string | undefined; counted: TokenBreakdown; logged: LoggedContext; loaded: LoadedSession }> {
  const bytes = onProgress ? (await stat(file)).size : 0;
  const loaded = await load(onProgress ? { onProgress: (read) => onProgress(bytes > 0 ? 0.45 * Math.min(1, read / bytes) : 0) } : {});
  const model = loaded.context.model;
  const { counter, raw } = services.tokens ? { counter: services.tokens, raw: undefined } : createMeasurementCounters(model ? { model } : {});
  const counted = countContextTokens(loaded.context, onProgress ? reportingCounter(counter, loaded.context, (done, total) => onProgress(0.45 + (total > 0 ? 0.45 * (done / total) : 0.45))) : counter);
  const logged = await readLoggedContext(file, loaded.context, counter, raw);
  return { model, counted, logged, loaded };
}

/** `counter`, telling `onProgress` how many characters of `context`'s texts it has counted. */
function reportingCounter(counter: TokenCounter, context: AgentContext, onProgress: (charsDone: number, charsTotal: number) => void): TokenCounter {
  let total = 0;
  for (const e of context.entries) if (!e.notBilled) for (const p of e.parts) if (isCountedText(p)) total += p.text.length;
  let done = 0;
  return {
    ...counter,
    count(text) {
      const n = counter.count(text);
      done += text.length;
      onProgress(done, total);
      return n;
    },
  };
}

export interface AnalyzeOptions {
  /** Store for the dry-run trim (default: a temporary one, discarded). */
  store?: ObjectStore;
  tokens?: TokenCounter;
  policy?: Partial<TrimPolicy>;
  /** Model calls simulated by the cache model (default 30). */
  turns?: number;
  /** Price as if the session ran on this model (default: the session's own). */
  model?: string;
}

export interface AnalyzeReport {
  agent: AgentKind;
  file: string;
  model?: string;
  messages: number;
  tokens: number;
  breakdown: Record<TokenCategory, number>;
  tokenizer: string;
  perMessage: TokenBreakdown['perEntry'];
  trimmed: { tokens: number; breakdown: Record<TokenCategory, number>; reduction: number };
  /** The system prompt and tool definitions (tokens), read off the log's usage; null when the log cannot tell. */
  systemAndTools: number | null;
  /** The whole request on resume, when systemAndTools is known. */
  request: RequestTokens | null;
  /** The log's own usage records: how many, and the last one against the estimate. */
  logged: LoggedContext;
  cache: {
    model: string;
    priced: boolean;
    prices: { input: number; cacheWrite5m: number; cacheWrite1h: number; cacheRead: number; output: number; unit: 'USD/MTok' };
    growthTokensPerTurn: number;
    outputTokensPerTurn: number;
    scenarios: CacheScenario[];
  };
  findings: { errors: number; warnings: number };
}

/** Token composition of the context, what trimming would save, and the prompt-caching economics. */
export async function analyzeSession(file: string, options: AnalyzeOptions = {}): Promise<AnalyzeReport> {
  const driver = driverFor(await detectAgent(file));
  const dir = await mkdtemp(join(tmpdir(), 'ctxvm-analyze-'));
  try {
    const store = options.store ?? createFsObjectStore({ root: join(dir, 'objects') });
    const out = join(dir, 'trimmed.jsonl');
    // the trim `trimSession` makes: its decisions use the same (uncalibrated) estimate, so the
    // numbers here are the ones `session trim` prints; then the input is loaded from its index
    const stats = await driver.trim({ input: file, output: out, store, policy: resolvePolicy(options.policy), tokens: options.tokens ?? createTokenCounter() });
    const { loaded, counted: before, logged } = await measureFile(driver, file, options, undefined, stats.loadInput);
    const counter = counterFor(options, loaded.context.model);
    const after = countContextTokens((await driver.load(out)).context, counter);
    const assistantTurns = before.perEntry.filter((e) => e.role === 'assistant' && !e.injected);
    const output = assistantTurns.length ? Math.round(assistantTurns.reduce((s, e) => s + e.tokens, 0) / assistantTurns.length) : 0;
    const userTurns = before.perEntry.filter((e) => e.role === 'user' && !e.injected);
    const growth = userTurns.length ? Math.round(userTurns.reduce((s, e) => s + e.tokens, 0) / userTurns.length) : 0;
    const model = options.model ?? loaded.context.model;
    const price = priceFor(model);
    return {
      agent: loaded.agent,
      file,
      ...(loaded.context.model ? { model: loaded.context.model } : {}),
      messages: loaded.context.entries.length,
      tokens: before.tokens,
      breakdown: before.breakdown,
      tokenizer: before.method,
      perMessage: before.perEntry,
      trimmed: { tokens: after.tokens, breakdown: after.breakdown, reduction: ratioRemoved(before.tokens, after.tokens) },
      systemAndTools: logged.systemAndTools,
      request: requestTokens(logged, before.tokens, after.tokens) ?? null,
      logged,
      cache: {
        model: model ?? 'unknown',
        priced: price.matched,
        prices: { input: price.input, cacheWrite5m: price.cacheWrite5m, cacheWrite1h: price.cacheWrite1h, cacheRead: price.cacheRead, output: price.output, unit: 'USD/MTok' },
        growthTokensPerTurn: growth,
        outputTokensPerTurn: output,
        scenarios: cacheScenarios({ beforeTokens: before.tokens, afterTokens: after.tokens, growthTokens: growth, outputTokens: output, price, ...(options.turns ? { turns: options.turns } : {}) }),
      },
      findings: { errors: loaded.findings.filter((f) => f.severity === 'error').length, warnings: loaded.findings.filter((f) => f.severity === 'warning').length },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
