/**
 * A file that is no session is refused the same way, with what it is instead, by validate,
 * analyze, trim and `ctxvm trim`'s file lookup — never "valid: 0 messages" or "empty file" for a
 * binary file or one long line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../store/drivers/objects-fs.js';
import { analyzeSession, trimSession, validateSession } from './session.js';
import { resolveSessionRef } from './discovery/resolve.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-detect-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const cases: [string, string | Buffer, RegExp][] = [
  ['empty', '', /empty file, not a session/],
  ['blank', '\n  \n\n', /only blank lines \(5 bytes\), not a session/],
  ['values', '[1]\n"x"\nnull\n', /no line is a JSON object \(3 lines hold other JSON values\), not a session/],
  ['binary', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 0x0a, 0, 2]), /:1: not valid JSON: the line contains NUL bytes \(is this a binary file\?\)/],
  ['one-long-line', 'A'.repeat(3 * 1024 * 1024), /:1: truncated last line \(3145728 bytes, no newline\)/],
];

describe('a file that is no session', () => {
  for (const [name, content, message] of cases) {
    it(`${name}: refused alike by validate, analyze, trim and the file lookup`, async () => {
      const file = join(dir, `${name}.jsonl`);
      await writeFile(file, content);
      const store = createFsObjectStore({ root: join(dir, 'objects') });
      const attempts = [
        () => validateSession(file),
        () => analyzeSession(file),
        () => trimSession({ input: file, output: join(dir, `${name}.out.jsonl`), store, measure: false }),
        () => resolveSessionRef(file, false, { cwd: dir, sessions: [] }),
      ];
      for (const attempt of attempts) await expect(attempt()).rejects.toMatchObject({ code: 'E_PARSE', message: expect.stringMatching(message) });
    });
  }
});
