/**
 * `-o` writes regular files only: a character device, a FIFO, a directory, a dangling link or a
 * link to standard output is refused (exit 2, nothing replaced); a link to a regular file is
 * written through; `-` prints to standard output. In-process CLI runs, CTXVM_HOME in a temp dir.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../support/claude-transcript.js';
import { runCliInProcess } from '../support/run-cli.js';

let dir: string;
let env: Record<string, string>;
let input: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-output-target-'));
  env = { CTXVM_HOME: join(dir, 'home'), HOME: join(dir, 'user') };
  await mkdir(env.HOME!, { recursive: true });
  const t = new Transcript();
  t.user('inspect the logs');
  for (let i = 0; i < 3; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat ${i}.log` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: 300 }, (_, k) => `line ${k} of log ${i}`).join('\n')));
  }
  t.assistant('msg_done', text('done'));
  for (let i = 0; i < 3; i++) {
    t.user(`next ${i}`);
    t.assistant(`msg_n${i}`, text(`ok ${i}`));
  }
  input = await writeTranscript(dir, t, 'session.jsonl');
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const trim = (output: string, ...extra: string[]) => runCliInProcess(['session', 'trim', input, '-o', output, ...extra], env, dir);

describe('session trim -o', () => {
  it('refuses a character device and leaves it one', async (t) => {
    // a device of our own (the null device's numbers): a regression must not replace /dev/null
    const device = join(dir, 'null-device');
    try {
      execFileSync('mknod', [device, 'c', '1', '3'], { stdio: 'ignore' });
    } catch {
      console.log('skipped: mknod needs root here; the FIFO and link cases below still run');
      t.skip();
      return;
    }
    const r = await trim(device);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/null-device: is a character device; -o writes only regular files/);
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
  });

  it('refuses a FIFO, a directory, a dangling link and a link to standard output', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const folder = join(dir, 'folder');
    await mkdir(folder);
    const dangling = join(dir, 'dangling.jsonl');
    symlinkSync(join(dir, 'nowhere', 'x.jsonl'), dangling);
    const toStdout = join(dir, 'stdout.jsonl');
    symlinkSync('/dev/stdout', toStdout);
    const cases: [string, RegExp][] = [
      [fifo, /is a FIFO \(named pipe\)/],
      [folder, /is a directory/],
      [dangling, /is a symbolic link to nothing \(dangling\)/],
      [toStdout, /is a symbolic link to (a character device|a FIFO|not a regular file|a socket)/],
    ];
    for (const [path, message] of cases) {
      const r = await trim(path);
      expect(r.code, path).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(lstatSync(folder).isDirectory()).toBe(true);
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(readlinkSync(toStdout)).toBe('/dev/stdout');
  });

  it('writes through a link to a regular file, keeping the link', async () => {
    const real = join(dir, 'real.jsonl');
    writeFileSync(real, 'old\n');
    const link = join(dir, 'link.jsonl');
    symlinkSync(real, link);
    const r = await trim(link);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toContain('[ctxvm paged out');
  });

  it('prints the trimmed session on standard output with -o -, and the report on stderr', async () => {
    const viaFile = join(dir, 'via-file.jsonl');
    expect((await trim(viaFile)).code).toBe(0);
    const r = await trim('-');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/trimmed .* → -/);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(readFileSync(viaFile, 'utf8').trimEnd().split('\n').length);
    for (const line of lines) JSON.parse(line);
    expect(r.stdout).toContain('[ctxvm paged out');
    const j = await trim('-', '--json');
    expect(j.code).toBe(2);
  });
});

describe('session page-in of a pointer off the payload', () => {
  it('fails for __proto__ and constructor like for a missing key, instead of printing {} or crashing', async () => {
    const trimmed = join(dir, 'for-page-in.jsonl');
    expect((await trim(trimmed)).code).toBe(0);
    // the annotation names the pack and offset of the original line: [pack, offset, length, ...]
    const [, pack, offset] = /"ctxvm":\{"v":3,"(?:o":\[|d":\[\[)"([0-9a-f]{64})",(\d+)/.exec(readFileSync(trimmed, 'utf8'))!;
    const base = `ctxvm:${pack!.slice(0, 16)}#${offset}`;
    const whole = await runCliInProcess(['session', 'page-in', `${base}/type`, '--session', trimmed], env, dir);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout.trim()).toMatch(/^(user|assistant)$/);
    // the same failure as any key the line does not have
    const missing = await runCliInProcess(['session', 'page-in', `${base}/no-such-key`, '--session', trimmed], env, dir);
    expect(missing.code).not.toBe(0);
    for (const pointer of ['/__proto__', '/__proto__/constructor', '/constructor']) {
      const r = await runCliInProcess(['session', 'page-in', base + pointer, '--session', trimmed], env, dir);
      expect(r.code, `${pointer}: ${r.stderr}`).toBe(missing.code);
      expect(r.stderr).toContain(`has nothing at ${pointer}`);
      expect(r.stdout).toBe('');
    }
  });
});
