/**
 * `ctxvm session economics` over a folder of generated sessions of both agents: the --json shape
 * the issue fixes, the table's numbers recomputed from the rows, the text table, bad usage. Claude
 * sessions come from ../shared's generator when it is there (skipped with a reason otherwise) and
 * from the test transcript builder always; Codex rollouts from RolloutBuilder.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutBuilder } from '../../src/session/codex/testing.js';
import { tempDir, Transcript, text, toolResult, toolUse, writeTranscript } from '../support/claude-transcript.js';
import { CLAUDE_GENERATOR, generatorSkipReason } from '../support/corpus.js';
import { runCliInProcess } from '../support/run-cli.js';

let dir: string;
let cleanup: () => Promise<void>;
const generatorMissing = generatorSkipReason();
if (generatorMissing) console.log(generatorMissing);

function claudeTools(): Transcript {
  const t = new Transcript();
  t.user('check the build');
  for (let i = 0; i < 3; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `make target-${i}` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: 300 }, (_, k) => `cc -c src/file-${k}.c -o build/file-${k}.o`).join('\n')));
  }
  t.assistant('msg_done', text('The build works.'));
  t.user('thanks');
  t.assistant('msg_end', text('You are welcome.'));
  return t;
}

function claudeChat(): Transcript {
  const t = new Transcript();
  for (let i = 0; i < 5; i++) {
    t.user(`What do you think of idea ${i}?`);
    t.assistant(`msg_${i}`, text(`Idea ${i} is sound, with one caveat about its cost that we should weigh before going further.`));
  }
  return t;
}

function codexTools(): string {
  const b = new RolloutBuilder().meta().turnContext().user('find the failing test');
  for (let i = 0; i < 3; i++) b.reasoning(`step ${i}`).shell(`npm test -- part-${i}`, Array.from({ length: 400 }, (_, k) => `✓ case ${k} of part ${i}`).join('\n'));
  return b.assistant('none fail').user('good').assistant('done').toString();
}

function codexChat(): string {
  const b = new RolloutBuilder().meta().turnContext();
  for (let i = 0; i < 4; i++) b.user(`question ${i} about the design`).assistant(`answer ${i}: it depends on the load`);
  return b.toString();
}

let files = 0;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('ctxvm-cli-economics-'));
  await mkdir(join(dir, 'sessions', 'claude'), { recursive: true });
  await mkdir(join(dir, 'sessions', 'codex'), { recursive: true });
  await writeTranscript(join(dir, 'sessions', 'claude'), claudeTools(), 'tools.jsonl');
  await writeTranscript(join(dir, 'sessions', 'claude'), claudeChat(), 'chat.jsonl');
  await writeFile(join(dir, 'sessions', 'codex', 'rollout-2025-09-26T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl'), codexTools());
  await writeFile(join(dir, 'sessions', 'codex', 'rollout-2025-09-26T11-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0002.jsonl'), codexChat());
  files = 4;
  if (!generatorMissing) {
    for (const [profile, seed] of [['mixed-tools', 3], ['conversational', 4], ['heavy-tools', 5]] as const) {
      execFileSync(process.execPath, [CLAUDE_GENERATOR, '--profile', profile, '--turns', '12', '--compactions', '0', '--seed', String(seed), '--out', join(dir, 'sessions', 'claude', `gen-${profile}.jsonl`)]);
      files++;
    }
  }
});
afterAll(() => cleanup());

const run = (...args: string[]) => runCliInProcess(['session', 'economics', ...args], { CTXVM_HOME: join(dir, 'home') }, dir);

interface Group {
  n: number;
  reductionMean: number;
  reductionPeak: number;
  breakEvenMean: number | null;
  contextMean: number;
}
interface Row {
  file: string;
  agent: string;
  class: 'mixed' | 'conversational';
  tokens: number;
  trimmedTokens: number;
  reduction: number;
  breakEvenTurn: number | null;
  cacheWriteUsd: number;
  perTurnSavingUsd: number;
}

describe('ctxvm session economics', () => {
  it('--json: {sessions: [...], groups: {all, mixed, conversational}: {n, reductionMean, reductionPeak, breakEvenMean, contextMean}}', async () => {
    const r = await run('sessions', '--json');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(''); // not a TTY: no progress bar
    const report = r.json<{ sessions: Row[]; groups: Record<'all' | 'mixed' | 'conversational', Group>; skipped: unknown[] }>();
    expect(report.sessions).toHaveLength(files);
    expect(Object.keys(report.groups).sort()).toEqual(['all', 'conversational', 'mixed']);
    for (const g of Object.values(report.groups)) {
      for (const k of ['n', 'reductionMean', 'reductionPeak', 'breakEvenMean', 'contextMean']) expect(g).toHaveProperty(k);
    }
    for (const s of report.sessions) {
      for (const k of ['file', 'agent', 'tokens', 'trimmedTokens', 'reduction', 'class', 'cacheWriteUsd', 'perTurnSavingUsd', 'breakEvenTurn']) expect(s).toHaveProperty(k);
    }
    const byName = (name: string) => report.sessions.find((s) => s.file.endsWith(name))!;
    expect(byName('tools.jsonl')).toMatchObject({ agent: 'claude', class: 'mixed' });
    expect(byName('chat.jsonl')).toMatchObject({ agent: 'claude', class: 'conversational', reduction: 0, breakEvenTurn: null });
    expect(byName('eeeeffff0001.jsonl')).toMatchObject({ agent: 'codex', class: 'mixed' });
    expect(byName('eeeeffff0002.jsonl')).toMatchObject({ agent: 'codex', class: 'conversational', breakEvenTurn: null });
    expect(byName('tools.jsonl').reduction).toBeGreaterThan(0.3);
    expect(byName('eeeeffff0001.jsonl').reduction).toBeGreaterThan(0.3);
    if (!generatorMissing) {
      expect(byName('gen-heavy-tools.jsonl').class).toBe('mixed');
      expect(byName('gen-mixed-tools.jsonl').reduction).toBeGreaterThan(0);
    }
  });

  it('the table is the arithmetic of the rows', async () => {
    const report = (await run('sessions', '--json')).json<{ sessions: Row[]; groups: Record<'all' | 'mixed' | 'conversational', Group> }>();
    const check = (g: Group, rows: Row[]) => {
      expect(g.n).toBe(rows.length);
      if (!rows.length) return;
      expect(g.reductionMean).toBeCloseTo(rows.reduce((a, s) => a + s.reduction, 0) / rows.length, 3);
      expect(g.reductionPeak).toBeCloseTo(Math.max(...rows.map((s) => s.reduction)), 4);
      expect(g.contextMean).toBe(Math.round(rows.reduce((a, s) => a + s.tokens, 0) / rows.length));
      const even = rows.flatMap((s) => (s.breakEvenTurn === null ? [] : [s.breakEvenTurn]));
      if (even.length) expect(g.breakEvenMean).toBeCloseTo(even.reduce((a, b) => a + b, 0) / even.length, 2);
      else expect(g.breakEvenMean).toBeNull();
    };
    check(report.groups.all, report.sessions);
    check(report.groups.mixed, report.sessions.filter((s) => s.class === 'mixed'));
    check(report.groups.conversational, report.sessions.filter((s) => s.class === 'conversational'));
  });

  it('prints the per-session table and the paper table, never a negative amount', async () => {
    const r = await run('sessions/claude/tools.jsonl', 'sessions/codex', '--ttl', '1h', '--model', 'claude-sonnet-4-5');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3 session(s)');
    expect(r.stdout).toContain('1h cache writes, priced as claude-sonnet-4-5');
    expect(r.stdout).toMatch(/^all\s+3\s/m);
    expect(r.stdout).toMatch(/^mixed tool\s+2\s/m);
    expect(r.stdout).toContain('never');
    expect(r.stdout).not.toMatch(/\$-|-\$/);
  });

  it('refuses a bad --ttl and a missing path with exit 2', async () => {
    const ttl = await run('sessions', '--ttl', '10m', '--json');
    expect(ttl.code).toBe(2);
    expect(ttl.json<{ error: { message: string } }>().error.message).toContain('--ttl must be 5m or 1h');
    const missing = await run('no-such-folder', '--json');
    expect(missing.code).toBe(2);
    expect(missing.json<{ error: { message: string } }>().error.message).toContain('no-such-folder: no such file or folder');
  });
});

describe('ctxvm session economics on a terminal', () => {
  it('draws a progress bar on stderr when stderr is a TTY, and clears it', async () => {
    const { runCli } = await import('../../src/cli/program.js');
    let stdout = '';
    let stderr = '';
    const code = await runCli(['session', 'economics', 'sessions/claude', 'sessions/codex'], {
      stdout: { write: (s: string) => ((stdout += s), true) } as unknown as NodeJS.WritableStream,
      stderr: { isTTY: true, columns: 100, write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream,
      env: { CTXVM_HOME: join(dir, 'home'), NO_COLOR: '1' },
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(stderr).toMatch(/economics \[[#.]+\]\s+\d+% \d+/);
    expect(stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(stdout).toContain(`${files} session(s)`);
  });
});
