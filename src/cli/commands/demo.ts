/** `ctxvm demo`: an offline tour in a temporary home, on generated data. */
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { TOKEN_CATEGORIES } from '../../session/context-model.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../program.js';
import { formatBytes, formatInt, formatPercent, table } from '../format.js';

const SEED = ['记得下午三点要开项目评审会。', '另外，下班前需要把周报发给我。', 'Ship the release notes by end of week.'];

export function registerDemo(program: Command, ctx: CommandContext): void {
  withJson(program.command('demo'))
    .description('run an offline tour of ctxvm on generated data, in a temporary folder (no network)')
    .option('--keep', 'keep the temporary folder and print its path')
    .option('--tz <zone>', 'time zone for the date examples', 'Asia/Shanghai')
    .action(async (opts: { json?: boolean; keep?: boolean; tz: string }) => {
      // loaded here, not at startup: other commands should not pay for chrono, jieba and the engines
      const { buildDemoClaudeSession } = await import('../../demo/claude-session.js');
      const { createFsObjectStore } = await import('../../store/drivers/objects-fs.js');
      const { analyzeSession, trimSession, validateSession } = await import('../../session/session.js');
      const { restoreSession } = await import('../../session/trim/restore.js');
      const { pageIn } = await import('../../session/trim/page-in.js');
      const { createTokenCounter } = await import('../../text/tokens.js');
      const { createSegmenter } = await import('../../text/segment.js');
      const { resolveDue } = await import('../../text/dates.js');
      const home = await mkdtemp(join(tmpdir(), 'ctxvm-demo-'));
      const say = (text: string) => {
        if (!opts.json) ctx.print(text);
      };
      try {
        say(`ctxvm demo — everything happens in ${home}\n`);

        // 1. text primitives
        const tokens = createTokenCounter();
        const segmenter = createSegmenter();
        const now = Date.now();
        const text = SEED.map((s) => {
          const due = resolveDue(s, { now, timeZone: opts.tz });
          return { text: s, tokens: tokens.count(s), segments: segmenter.segment(s), due: due ? { phrase: due.text, at: new Date(due.dueMs).toISOString() } : null };
        });
        say('1. Text: tokens (o200k), search tokens (jieba), due times resolved in ' + opts.tz);
        for (const t of text) say(`   ${t.text}\n     ${t.tokens} tokens · [${t.segments.join(' ')}]${t.due ? ` · "${t.due.phrase}" → ${t.due.at}` : ''}`);

        // 2. sessions: a generated Claude Code transcript
        const projectDir = join(home, 'claude', 'projects', '-home-demo-app');
        await mkdir(projectDir, { recursive: true });
        const lines = buildDemoClaudeSession();
        const original = join(projectDir, 'demo-session.jsonl');
        await writeFile(original, lines.join('\n') + '\n');
        const store = createFsObjectStore({ root: join(home, 'objects'), durability: 'deferred' });
        const analysis = await analyzeSession(original);
        say(`\n2. Sessions: a Claude Code transcript (${lines.length} lines, ${formatBytes((await readFile(original)).length)})`);
        say(`   what Claude Code would send on resume: ${analysis.messages} messages, ${formatInt(analysis.tokens)} tokens (${analysis.tokenizer})`);
        say(
          table(
            ['category', 'now', 'after trim'],
            TOKEN_CATEGORIES.filter((c) => analysis.breakdown[c] || analysis.trimmed.breakdown[c]).map((c) => [c, formatInt(analysis.breakdown[c]), formatInt(analysis.trimmed.breakdown[c])]),
          )
            .split('\n')
            .map((l) => `     ${l}`)
            .join('\n'),
        );
        const trimmedPath = join(projectDir, 'demo-session.trimmed.jsonl');
        const trim = await trimSession({ input: original, output: trimmedPath, store });
        const validation = await validateSession(trimmedPath);
        say(`   trim: ${formatInt(trim.input.tokens ?? 0)} → ${formatInt(trim.output.tokens ?? 0)} tokens (−${formatPercent(trim.reduction ?? 0)}), ${formatBytes(trim.input.bytes)} → ${formatBytes(trim.output.bytes)}, valid: ${validation.valid ? 'yes' : 'NO'}`);
        const stubRef = /ctxvm:[0-9a-f]{16}#[^\s"\\]+/.exec(await readFile(trimmedPath, 'utf8'))?.[0];
        let paged: { ref: string; chars: number; head: string } | null = null;
        if (stubRef) {
          const p = await pageIn(store, stubRef);
          paged = { ref: stubRef, chars: p.text.length, head: p.text.split('\n').slice(0, 2).join(' | ') };
          say(`   page-in ${stubRef}: ${formatInt(p.text.length)} characters back (${paged.head.slice(0, 70)}…)`);
        }
        const restoredPath = join(home, 'restored.jsonl');
        await restoreSession({ input: trimmedPath, output: restoredPath, store });
        const identical = (await readFile(restoredPath)).equals(await readFile(original));
        say(`   restore: ${identical ? 'byte-identical to the original' : 'DIFFERS from the original'}`);
        const cache = analysis.cache.scenarios.find((s) => s.ttl === '5m' && s.untrimmedCacheWarm);
        if (cache) say(`   prompt caching (${analysis.cache.model}, 5-minute TTL, warm cache): trimming pays back after call ${cache.breakEvenTurn ?? 'never'}, then saves $${cache.perTurnSavingUsd.toFixed(4)} per call`);

        if (opts.keep) say(`\nkept ${home}`);
        if (opts.json) {
          ctx.printJson({
            home: opts.keep ? home : null,
            text,
            session: {
              lines: lines.length,
              analyze: { messages: analysis.messages, tokens: analysis.tokens, breakdown: analysis.breakdown, trimmed: analysis.trimmed },
              trim: { input: trim.input, output: trim.output, reduction: trim.reduction, valid: validation.valid },
              pageIn: paged,
              restoreIdentical: identical,
            },
          });
        }
        if (!identical || !validation.valid) process.exitCode = 1;
      } finally {
        if (!opts.keep) await rm(home, { recursive: true, force: true });
      }
    });
}
