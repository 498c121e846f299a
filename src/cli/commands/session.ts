/** `ctxvm session trim|validate|analyze|restore|page-in`. */
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { UsageError } from '../../errors.js';
// the engines load inside the actions, so `ctxvm --help` and unrelated commands start fast
const engine = async () => ({
  ...(await import('../../session/session.js')),
  ...(await import('../../session/trim/restore.js')),
  ...(await import('../../session/trim/page-in.js')),
  ...(await import('../../store/drivers/objects-fs.js')),
});
import { TOKEN_CATEGORIES } from '../../session/context-model.js';
import type { CommandContext } from '../io.js';
import { createProgress } from '../progress.js';
import { ExitCode, withJson } from '../command-kit.js';
import { formatBytes, formatCost, formatInt, formatPercent, formatReduction, formatSaving, table } from '../format.js';
import { registerSessionEconomics } from './session-economics.js';
import { resolveOutputTarget, writeToTarget } from '../output-path.js';

function intOption(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
    return n;
  };
}

function boolOption(name: string) {
  return (value: string) => {
    const v = value.trim().toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(v)) return true;
    if (['false', 'no', 'off', '0'].includes(v)) return false;
    throw new UsageError(`${name} must be true or false, got ${JSON.stringify(value)}`);
  };
}

interface TrimFlags {
  keepThinking?: boolean;
  keepImages?: boolean;
  /** true for a bare --keep-errors, false for --no-keep-errors, a string for the old `--keep-errors <bool>`. */
  keepErrors?: boolean | string;
  thinking?: boolean;
  images?: boolean;
}

/**
 * `--keep-errors` is a plain switch; its value stays optional only so that the old
 * `--keep-errors false` still parses (with a warning). Help shows the switch alone.
 */
function keepErrorsOption(): Option {
  const option = new Option('--keep-errors [old-value]', 'keep the current user turn\'s error tool results up to the last turn\'s threshold (the default)');
  option.flags = '--keep-errors';
  return option;
}

/** What to keep, from the flags; the old spellings still work and say what they became. */
/** The trim report's validity line: an input that was already invalid stays so, and says where. */
function validLine(input: string, report: { valid: boolean; warnings: ReadonlyArray<{ severity: string; repaired: boolean; line: number; rule: string }> }): string {
  if (report.valid) return '  valid: yes (checked before writing)';
  const kept = report.warnings.filter((f) => f.severity === 'error' && !f.repaired);
  const first = kept[0];
  return `  valid: no: the input's own ${kept.length} error(s) are kept as they were${first ? ` (first: ${input}:${first.line}: ${first.rule})` : ''}, none added; see \`ctxvm session validate ${input}\``;
}

export function keepFlags(opts: TrimFlags, warn: (message: string) => void): { thinking: boolean; images: boolean; errors: boolean } {
  if (opts.thinking === false) warn('--no-thinking is now --keep-thinking (it always meant: keep thinking blocks)');
  if (opts.images === false) warn('--no-images is now --keep-images (it always meant: keep images)');
  let errors = true;
  if (typeof opts.keepErrors === 'string') {
    errors = boolOption('--keep-errors')(opts.keepErrors);
    warn(`--keep-errors takes no value now: use ${errors ? '--keep-errors' : '--no-keep-errors'}`);
  } else if (opts.keepErrors === false) errors = false;
  return {
    thinking: opts.keepThinking === true || opts.thinking === false,
    images: opts.keepImages === true || opts.images === false,
    errors,
  };
}

export function registerSession(program: Command, ctx: CommandContext): void {
  const session = program.command('session').description('inspect, trim, restore and page in one session file (Claude Code or Codex)');
  const store = async () => (await engine()).createFsObjectStore({ root: ctx.config().objectsDir, durability: 'deferred' });

  withJson(session.command('trim'))
    .description('page bulky payloads out behind stubs; user and assistant text stay verbatim; restorable byte for byte')
    .argument('<in>', 'session file (.jsonl)')
    .requiredOption('-o, --output <out>', 'where to write the trimmed session (a regular file, written atomically, or - for standard output; the input is never modified)')
    .option('--threshold <tokens>', 'page out tool results above this many tokens (default 200)', intOption('--threshold'))
    .option('--keep-turns <n>', 'leave the last N model round trips untouched (default 1)', intOption('--keep-turns'))
    .option('--keep-thinking', 'keep the thinking blocks of earlier turns (default: paged out)')
    .option('--keep-images', 'keep base64 images (default: paged out)')
    .addOption(keepErrorsOption())
    .option('--no-keep-errors', 'page error tool results out like any other')
    // the spellings before 0.2, which read backwards: accepted, with a warning
    .addOption(new Option('--no-thinking').hideHelp())
    .addOption(new Option('--no-images').hideHelp())
    .action(async (input: string, opts: TrimFlags & { output: string; json?: boolean; threshold?: number; keepTurns?: number }) => {
      const keep = keepFlags(opts, (m) => ctx.note(`ctxvm: warning: ${m}`));
      const target = await resolveOutputTarget(ctx.io.cwd, opts.output);
      if (target.kind === 'stdout' && opts.json) throw new UsageError('--json needs -o FILE: with -o - the trimmed session itself is printed on stdout');
      const progress = createProgress(ctx.io.stderr, { label: 'trim', total: 0 });
      let counting: ReturnType<typeof createProgress> | undefined;
      const { trimSession } = await engine();
      const report = await writeToTarget(target, join(ctx.config().home, 'tmp'), ctx.io.stdout, async (output) => trimSession({
        input: resolve(ctx.io.cwd, input),
        output,
        store: await store(),
        policy: {
          ...(opts.threshold !== undefined ? { toolResultTokens: opts.threshold, toolInputTokens: opts.threshold } : {}),
          ...(opts.keepTurns !== undefined ? { keepLastTurns: opts.keepTurns } : {}),
          keepErrors: keep.errors,
          thinking: !keep.thinking,
          images: !keep.images,
        },
        onProgress: (done) => progress.update(done),
        onCountProgress: (share) => {
          if (!counting) {
            progress.done();
            counting = createProgress(ctx.io.stderr, { label: 'count tokens', total: 1000, unit: 'share' });
          }
          counting.update(Math.round(1000 * share));
        },
      }));
      progress.done();
      counting?.done();
      if (opts.json) return ctx.printJson(report);
      (target.kind === 'stdout' ? ctx.note : ctx.print)(
        [
          `trimmed ${input} → ${opts.output}`,
          `  tokens  ${formatInt(report.input.tokens ?? 0)} → ${formatInt(report.output.tokens ?? 0)}  (−${formatPercent(report.reduction ?? 0)}, ${report.tokenizer})`,
          ...(report.request ? [`  request ${formatInt(report.request.tokens)} → ${formatInt(report.request.trimmedTokens)}  (${formatReduction(report.request.reduction)} of the whole request: system + tools ${formatInt(report.request.systemAndTools)}, from the log's usage)`] : []),
          `  bytes   ${formatBytes(report.input.bytes)} → ${formatBytes(report.output.bytes)}`,
          `  paged out: ${Object.entries(report.pagedOut).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing'}; ${report.removedLines} lines removed`,
          validLine(input, report),
          `  undo: ctxvm session restore ${opts.output} -o <original.jsonl>`,
        ].join('\n'),
      );
    });

  withJson(session.command('validate'))
    .description('check a session against the API and resume rules; exit 1 when invalid')
    .argument('<file>', 'session file (.jsonl)')
    .action(async (file: string, opts: { json?: boolean }) => {
      const { validateSession } = await engine();
      const report = await validateSession(resolve(ctx.io.cwd, file));
      if (opts.json) ctx.printJson(report);
      else {
        for (const e of report.errors) ctx.print(`${file}:${e.line}: error: ${e.message} [${e.rule}]`);
        for (const w of report.warnings) ctx.print(`${file}:${w.line}: warning: ${w.message} [${w.rule}]`);
        ctx.print(report.valid ? `valid: ${report.agent} session, ${report.messages} messages${report.warnings.length ? `, ${report.warnings.length} warning(s)` : ''}` : `invalid: ${report.errors.length} error(s)`);
      }
      if (!report.valid) throw new ExitCode(1);
    });

  withJson(session.command('analyze'))
    .description('token composition of what the agent sends on resume, and the prompt-caching economics of trimming it')
    .argument('<file>', 'session file (.jsonl)')
    .option('--turns <n>', 'model calls to simulate after resuming (default 30)', intOption('--turns'))
    .option('--model <name>', 'price as this model (default: the session\'s own)')
    .action(async (file: string, opts: { json?: boolean; turns?: number; model?: string }) => {
      const { analyzeSession } = await engine();
      const r = await analyzeSession(resolve(ctx.io.cwd, file), { ...(opts.turns ? { turns: opts.turns } : {}), ...(opts.model ? { model: opts.model } : {}) });
      if (opts.json) return ctx.printJson(r);
      ctx.print(`${r.agent} session, ${r.messages} messages, model ${r.model ?? 'unknown'}; tokens by ${r.tokenizer}`);
      const system = r.systemAndTools === null ? ['system + tools', 'unknown', 'unknown'] : ['system + tools', formatInt(r.systemAndTools), formatInt(r.systemAndTools)];
      const rows = [system, ...TOKEN_CATEGORIES.map((c) => [c, formatInt(r.breakdown[c]), formatInt(r.trimmed.breakdown[c])]), ['messages', formatInt(r.tokens), `${formatInt(r.trimmed.tokens)} (${formatReduction(r.trimmed.reduction)})`]];
      if (r.request) rows.push(['whole request', formatInt(r.request.tokens), `${formatInt(r.request.trimmedTokens)} (${formatReduction(r.request.reduction)})`]);
      ctx.print(table(['category', 'now', 'after trim'], rows));
      ctx.print(
        r.systemAndTools === null
          ? `system + tools: unknown (${r.logged.requests === 0 ? 'the log records no usage' : "the log's usage is below the estimate of its own messages"})`
          : `system + tools: the first logged request's ${formatInt(r.logged.first!.inputTokens)} billed input tokens minus the ${formatInt(r.logged.first!.messagesEstimate)} of its messages (line ${r.logged.first!.line})`,
      );
      const last = r.logged.last;
      if (last && r.logged.requests > 1) ctx.print(`check: the last logged request (line ${last.line}) billed ${formatInt(last.inputTokens)} input tokens; estimate ${formatInt(last.estimate)} (${last.error >= 0 ? '+' : '−'}${formatPercent(Math.abs(last.error))})`);
      ctx.print(`\nprompt caching (${r.cache.model}${r.cache.priced ? '' : ', unknown model: Sonnet prices'}; +${formatInt(r.cache.growthTokensPerTurn)} in / ${formatInt(r.cache.outputTokensPerTurn)} out tokens per call):`);
      ctx.print(
        table(
          ['ttl', 'untrimmed cache', 'cold-start cost', 'saving per call', 'break-even call', 'hit rate (untrimmed→trimmed)'],
          r.cache.scenarios.map((s) => [
            s.ttl,
            s.untrimmedCacheWarm ? 'warm' : 'cold',
            formatCost(s.coldStartCostUsd),
            formatSaving(s.perTurnSavingUsd),
            s.breakEvenTurn === null ? 'never' : String(s.breakEvenTurn),
            `${formatPercent(s.hitRate.untrimmed)} → ${formatPercent(s.hitRate.trimmed)}`,
          ]),
        ),
      );
    });

  registerSessionEconomics(session, ctx);

  withJson(session.command('restore'))
    .description('rebuild the original session byte for byte from a trimmed one and the object store')
    .argument('<trimmed>', 'trimmed session file')
    .requiredOption('-o, --output <out>', 'where to write the original (a regular file, written atomically, or - for standard output)')
    .action(async (input: string, opts: { output: string; json?: boolean }) => {
      const target = await resolveOutputTarget(ctx.io.cwd, opts.output);
      if (target.kind === 'stdout' && opts.json) throw new UsageError('--json needs -o FILE: with -o - the restored session itself is printed on stdout');
      const { restoreSession } = await engine();
      const scratchDir = join(ctx.config().home, 'tmp');
      const r = await writeToTarget(target, scratchDir, ctx.io.stdout, async (output) => restoreSession({ input: resolve(ctx.io.cwd, input), output, store: await store(), scratchDir }));
      // annotations of builds before digests: restored, but nothing vouched for those bytes
      if (r.unverified > 0) ctx.io.stderr.write(`ctxvm: warning: ${r.unverified} part(s) of ${input} carry no digest (trimmed by an earlier ctxvm); restored without checking them\n`);
      if (opts.json) return ctx.printJson({ output: opts.output, ...r });
      (target.kind === 'stdout' ? ctx.note : ctx.print)(`restored ${opts.output}: ${r.restoredLines} lines back from the store${r.levels > 1 ? ` (${r.levels} nested trims undone)` : ''}, ${formatBytes(r.bytes)}`);
    });

  withJson(session.command('page-in'))
    .description('print one paged-out payload: by the tool_use_id (or call_id) beside its stub, <id>/<input field>, or a ctxvm:<pack>#<offset>/<pointer> reference')
    .argument('<ref>', 'tool_use_id, <tool_use_id>/<field>, or a ctxvm: reference from a stub')
    .option('--session <file>', 'the trimmed session file the stub is in (default: searched for in the agents\' folders, this project first)')
    .action(async (ref: string, opts: { json?: boolean; session?: string }) => {
      const { pageIn } = await engine();
      const { encodeClaudeProjectDir } = await import('../../session/discovery/resolve.js');
      const cfg = ctx.config();
      const projects = join(cfg.claudeConfigDir, 'projects');
      const p = await pageIn(await store(), ref, {
        files: opts.session ? [resolve(ctx.io.cwd, opts.session)] : [],
        searchRoots: [join(projects, encodeClaudeProjectDir(ctx.io.cwd)), projects, join(cfg.codexHome, 'sessions'), join(cfg.codexHome, 'archived_sessions')],
      });
      if (opts.json) return ctx.printJson({ ref, hash: p.hash, pointer: p.pointer, kind: p.kind, content: p.content, ...(p.file ? { file: p.file } : {}), verified: p.verified });
      ctx.io.stdout.write(p.text.endsWith('\n') ? p.text : p.text + '\n');
    });
}
