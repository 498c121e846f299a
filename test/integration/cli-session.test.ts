/**
 * `ctxvm session …` as scripts use it: the built CLI (`dist/cli/main.js`) in a subprocess, with
 * CTXVM_HOME in a temp dir. Checks the JSON contracts of DESIGN.md, exit codes (0 ok, 1 invalid
 * or failed, 2 bad input), --help and --version, and a closed pipe.
 * Needs `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findStubs } from '../../src/session/trim/stub-scan.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../support/claude-transcript.js';
import { REPO_ROOT } from '../support/corpus.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
/** The page-in reference of the first stub in a trimmed file. */
function firstStubRef(trimmed: string): string | undefined {
  for (const line of trimmed.split('\n')) if (line.includes('[ctxvm paged out')) for (const s of findStubs(JSON.parse(line))) return s.ref;
  return undefined;
}
const TOKEN_CATEGORIES = ['userText', 'assistantText', 'toolInput', 'toolResult', 'image', 'thinking', 'system'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let home: string;
let dir: string;

function spawnRun(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: dir, env: { ...process.env, CTXVM_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const ctxvm = (...args: string[]) => spawnRun(process.execPath, [MAIN, ...args]);
const json = <T = Record<string, unknown>>(r: Run): T => JSON.parse(r.stdout) as T;

/** A session worth trimming: large tool results in early turns, an error result, `followUps` more turns after. */
function bigSession(followUps = 3): Transcript {
  const t = new Transcript();
  t.user('please inspect the repository');
  for (let i = 0; i < 4; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat file-${i}.log` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: 400 }, (_, k) => `line ${k} of file ${i}: some log output here`).join('\n')));
  }
  t.assistant('msg_err', toolUse('toolu_err', 'Bash', { command: 'make' }));
  // an error below the tail's threshold (1,000 tokens): kept by default while its turn goes on
  t.results(toolResult('toolu_err', Array.from({ length: 60 }, (_, k) => `error ${k}: undefined reference`).join('\n'), true));
  t.assistant('msg_done', text('I have looked at all of them.'));
  for (let i = 0; i < followUps; i++) {
    t.user(`follow-up question ${i}`);
    t.assistant(`msg_after_${i}`, text(`answer ${i}`));
  }
  return t;
}

let session: string;
beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before the CLI tests`);
  const built = (await stat(MAIN)).mtimeMs;
  const sources = [join(REPO_ROOT, 'src', 'cli', 'commands', 'session.ts'), join(REPO_ROOT, 'src', 'session', 'session.ts')];
  for (const src of sources) if (existsSync(src) && (await stat(src)).mtimeMs > built) console.warn(`[warn] ${src} is newer than ${MAIN}: run \`npm run build\` to test the current code`);
  home = await mkdtemp(join(tmpdir(), 'ctxvm-cli-home-'));
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-cli-'));
  session = await writeTranscript(dir, bigSession(), 'session.jsonl');
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

describe('ctxvm session trim / restore / page-in', () => {
  let report: { input: { bytes: number; tokens: number }; output: { bytes: number; tokens: number }; reduction: number; valid: boolean };
  const out = () => join(dir, 'trimmed.jsonl');
  beforeAll(async () => {
    const r = await ctxvm('session', 'trim', session, '-o', out(), '--json');
    expect(r.code, r.stderr).toBe(0);
    report = json<typeof report>(r);
  });

  it('trim --json prints one JSON document with sizes, tokens, reduction and validity', async () => {
    expect(report.input.bytes).toBe((await stat(session)).size);
    expect(report.output.bytes).toBe((await stat(out())).size);
    expect(report.input.tokens).toBeGreaterThan(0);
    expect(report.output.tokens).toBeGreaterThan(0);
    expect(report.output.tokens).toBeLessThan(report.input.tokens);
    expect(report.reduction).toBeGreaterThan(0);
    expect(report.reduction).toBeLessThanOrEqual(1);
    expect(report.reduction).toBeCloseTo(1 - report.output.tokens / report.input.tokens, 3);
    expect(report.valid).toBe(true);
  });

  it('trim of a session that is already invalid says so, naming its file, line and rule', async () => {
    // two replies with different message ids in a row: an error trimming neither adds nor repairs
    const t = bigSession();
    t.assistant('msg_extra', text('and another thing'));
    t.user('one more question');
    t.assistant('msg_last', text('last answer'));
    const bad = await writeTranscript(dir, t, 'already-invalid.jsonl');
    const validate = await ctxvm('session', 'validate', bad, '--json');
    const errors = json<{ errors: { line: number; rule: string }[] }>(validate).errors;
    expect(errors.map((e) => e.rule)).toEqual(['role-order']);
    const r = await ctxvm('session', 'trim', bad, '-o', join(dir, 'already-invalid.trimmed.jsonl'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`valid: no: the input's own 1 error(s) are kept as they were (first: ${bad}:${errors[0]!.line}: role-order), none added; see \`ctxvm session validate ${bad}\``);
    expect(r.stdout + r.stderr).not.toMatch(/please report|bug in ctxvm/);
  });

  it('restore reproduces the original bytes', async () => {
    const restored = join(dir, 'restored.jsonl');
    const r = await ctxvm('session', 'restore', out(), '-o', restored);
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.compare(await readFile(restored), await readFile(session))).toBe(0);
  });

  it('page-in prints the paged-out payload', async () => {
    const trimmed = await readFile(out(), 'utf8');
    const ref = firstStubRef(trimmed);
    // the stub of toolu_0 comes first in the file; it pages in by that id, from the trimmed file
    expect(ref).toBe('toolu_0');
    const original = (JSON.parse((await readFile(session, 'utf8')).split('\n')[2]!) as { message: { content: { content: string }[] } }).message.content[0]!.content;
    const r = await ctxvm('session', 'page-in', ref!, '--session', out());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(original.endsWith('\n') ? original : original + '\n');
  });

  it('--no-keep-errors pages out error results; by default the current turn\'s stay; the old --keep-errors false warns', async () => {
    /** The content of the tool_result for toolu_err in a trimmed file. */
    const errorResult = async (file: string) => {
      for (const l of (await readFile(file, 'utf8')).split('\n').filter(Boolean)) {
        const blocks = (JSON.parse(l) as { message?: { content?: unknown } }).message?.content;
        const hit = Array.isArray(blocks) ? (blocks as { tool_use_id?: string; content?: unknown }[]).find((b) => b.tool_use_id === 'toolu_err') : undefined;
        if (hit) return hit.content;
      }
      throw new Error(`no toolu_err result in ${file}`);
    };
    // answered before the follow-up prompts: paged out by default
    expect(String(await errorResult(out())).startsWith('[ctxvm paged out')).toBe(true);
    // the session ending in the error's turn: kept by default
    const session = await writeTranscript(dir, bigSession(0), 'session-error-turn.jsonl');
    const original = await errorResult(session);
    const o1 = join(dir, 'trimmed-errors-default.jsonl');
    expect((await ctxvm('session', 'trim', session, '-o', o1, '--json')).code).toBe(0);
    expect(await errorResult(o1)).toEqual(original);
    const o2 = join(dir, 'trimmed-errors.jsonl');
    const r = await ctxvm('session', 'trim', session, '-o', o2, '--no-keep-errors', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    const paged = await errorResult(o2);
    expect(paged).not.toEqual(original);
    expect(String(paged).startsWith('[ctxvm paged out')).toBe(true);
    expect(String(paged)).toContain('error');
    const o3 = join(dir, 'trimmed-errors-old.jsonl');
    const old = await ctxvm('session', 'trim', session, '-o', o3, '--keep-errors', 'false', '--json');
    expect(old.code, old.stderr).toBe(0);
    expect(old.stderr).toMatch(/warning: --keep-errors takes no value now: use --no-keep-errors/);
    expect(await errorResult(o3)).toEqual(paged);
    const bare = await ctxvm('session', 'trim', session, '-o', join(dir, 'trimmed-errors-kept.jsonl'), '--keep-errors', '--json');
    expect(bare.code, bare.stderr).toBe(0);
    expect(await errorResult(join(dir, 'trimmed-errors-kept.jsonl'))).toEqual(original);
    const bad = await ctxvm('session', 'trim', session, '-o', join(dir, 'never.jsonl'), '--keep-errors', 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--keep-errors/);
  });

  it('--json on an error prints one JSON error document and exits 2 for bad input', async () => {
    const r = await ctxvm('session', 'trim', join(dir, 'missing.jsonl'), '-o', join(dir, 'x.jsonl'), '--json');
    expect(r.code).toBe(2);
    expect(json<{ error: { code: string } }>(r).error.code).toBe('E_NOT_FOUND');
  });
});

describe('ctxvm session validate', () => {
  it('--json on a valid session: valid=true, errors=[], exit 0', async () => {
    const r = await ctxvm('session', 'validate', session, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ valid: true, errors: [] });
  });

  it('--json on a tool_result whose tool_use is missing: valid=false, the error names rule and line, exit 1', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    t.results(toolResult('toolu_missing', 'orphan result'));
    t.assistant('msg_2', text('after'));
    const file = await writeTranscript(dir, t, 'invalid.jsonl');
    const r = await ctxvm('session', 'validate', file, '--json');
    expect(r.code).toBe(1);
    const report = json<{ valid: boolean; errors: { rule: string; line: number; message: string }[] }>(r);
    expect(report.valid).toBe(false);
    expect(report.errors).toContainEqual({ rule: 'tool-result-without-use', line: 3, message: expect.stringContaining('toolu_missing') });
    for (const e of report.errors) expect(Object.keys(e).sort()).toEqual(['line', 'message', 'rule']);
  });
});

describe('ctxvm session analyze', () => {
  it('--json has tokens, a breakdown by every category, and cache scenarios with a break-even turn', async () => {
    const r = await ctxvm('session', 'analyze', session, '--json');
    expect(r.code, r.stderr).toBe(0);
    const a = json<{ tokens: number; breakdown: Record<string, number>; cache: { scenarios: { breakEvenTurn: number | null }[] } }>(r);
    expect(a.tokens).toBeGreaterThan(0);
    expect(Object.keys(a.breakdown).sort()).toEqual([...TOKEN_CATEGORIES].sort());
    expect(Object.values(a.breakdown).reduce((x, y) => x + y, 0)).toBe(a.tokens);
    expect(a.breakdown.toolResult).toBeGreaterThan(a.breakdown.userText!);
    expect(a.cache.scenarios.length).toBeGreaterThan(0);
    for (const s of a.cache.scenarios) {
      expect(s).toHaveProperty('breakEvenTurn');
      expect(s.breakEvenTurn === null || (Number.isInteger(s.breakEvenTurn) && s.breakEvenTurn >= 1)).toBe(true);
    }
  });
});

describe('bad input', () => {
  let malformed: string;
  beforeAll(async () => {
    const lines = (await readFile(session, 'utf8')).split('\n');
    lines.splice(4, 0, '{"type":"assistant","message":{"content":[');
    malformed = join(dir, 'malformed.jsonl');
    await writeFile(malformed, lines.join('\n'));
  });

  it.each([['trim'], ['analyze']])('session %s on a malformed file: exit 2 and a message naming the file and line', async (cmd) => {
    const args = cmd === 'trim' ? ['session', 'trim', malformed, '-o', join(dir, 'never.jsonl')] : ['session', 'analyze', malformed];
    const r = await ctxvm(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${malformed}:5`);
    expect(r.stdout).toBe('');
    expect(existsSync(join(dir, 'never.jsonl'))).toBe(false);
  });

  it('session validate on a malformed file reports the bad line as invalid (exit 1)', async () => {
    const r = await ctxvm('session', 'validate', malformed, '--json');
    expect(r.code).toBe(1);
    expect(json<{ errors: { rule: string; line: number }[] }>(r).errors).toContainEqual(expect.objectContaining({ rule: 'json-line', line: 5 }));
  });
});

describe('help, version, pipes', () => {
  it.each([['session'], ['session', 'trim'], ['session', 'validate'], ['session', 'analyze'], ['session', 'restore'], ['session', 'page-in']])('%s --help exits 0', async (...cmd) => {
    const r = await ctxvm(...cmd, '--help');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Usage:/);
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await ctxvm('--version');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('piping into head -1 prints no EPIPE error', async () => {
    const r = await spawnRun('bash', ['-o', 'pipefail', '-c', `node ${JSON.stringify(MAIN)} session analyze ${JSON.stringify(session)} | head -1`]);
    expect(r.stderr).not.toMatch(/EPIPE|Error/);
    expect(r.stdout).toMatch(/^claude session, \d+ messages/);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.code).toBe(0);
  });

  // an output far larger than a pipe buffer, so the write really fails with EPIPE
  it('a large page-in into head -1 prints no EPIPE error either', async () => {
    const t = new Transcript();
    t.user('dump it');
    t.assistant('msg_1', toolUse('toolu_big', 'Bash', { command: 'cat huge.log' }));
    t.results(toolResult('toolu_big', Array.from({ length: 40_000 }, (_, i) => `log line ${i}`).join('\n')));
    for (let i = 0; i < 3; i++) {
      t.user(`next ${i}`);
      t.assistant(`msg_n${i}`, text(`ok ${i}`));
    }
    const input = await writeTranscript(dir, t, 'huge.jsonl');
    const trimmed = join(dir, 'huge-trimmed.jsonl');
    expect((await ctxvm('session', 'trim', input, '-o', trimmed)).code).toBe(0);
    const ref = firstStubRef(await readFile(trimmed, 'utf8'))!;
    const r = await spawnRun('bash', ['-o', 'pipefail', '-c', `node ${JSON.stringify(MAIN)} session page-in '${ref}' --session '${trimmed}' | head -1`]);
    expect(r.stdout).toBe('log line 0\n');
    expect(r.stderr).not.toMatch(/EPIPE|Error/);
    expect(r.code).toBe(0);
  });
});
