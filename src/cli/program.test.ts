import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createCommandContext } from './io.js';
import { COMMANDS, commandsFor } from './program.js';

const names = (argv: string[]) => commandsFor(argv).map((c) => c.name);

describe('commandsFor', () => {
  it('loads only the command being run, none for --version, all for help and unknown words', () => {
    expect(names(['sessions', '--json'])).toEqual(['sessions']);
    expect(names(['--debug', 'tree', '--json'])).toEqual(['tree']);
    expect(names(['session', 'trim', 'in.jsonl', '-o', 'out.jsonl'])).toEqual(['session']);
    expect(names(['--version'])).toEqual([]);
    expect(names(['-V'])).toEqual([]);
    const all = COMMANDS.map((c) => c.name);
    expect(names([])).toEqual(all);
    expect(names(['--help'])).toEqual(all);
    expect(names(['help', 'tree'])).toEqual(all);
    expect(names(['sesions'])).toEqual(all);
  });

  it('every entry registers the command it is named after', async () => {
    const ctx = createCommandContext({ stdout: process.stdout, stderr: process.stderr, env: {}, cwd: process.cwd() });
    for (const entry of COMMANDS) {
      const program = new Command('ctxvm');
      (await entry.load())(program, ctx);
      expect(program.commands.map((c) => c.name())).toEqual([entry.name]);
    }
  });
});
