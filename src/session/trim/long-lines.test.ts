/**
 * A session with one line of several read blocks (a pasted file, a large image) right after an
 * ordinary line: trim and analyze read it whole and blame no line with another's bytes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { READ_BLOCK_BYTES } from '../../core/jsonl.js';
import { analyzeSession, trimSession, validateSession } from '../session.js';
import { restoreSession } from './restore.js';
import { Transcript, tempDir, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('ctxvm-long-lines-'));
});
afterAll(async () => cleanup());

/** Ordinary turns, then a tool result of `pasteBytes` (a file read), then more turns. */
function sessionWithPaste(pasteBytes: number): Transcript {
  const t = new Transcript();
  const turns = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      t.user(`question ${i}`);
      t.assistant(`msg_${i}`, text(`answer ${i}`));
    }
  };
  turns(0, 20);
  t.user('read big.ts');
  t.assistant('msg_read', toolUse('toolu_read', 'Read', { file_path: '/home/dev/project/big.ts' }));
  t.results(toolResult('toolu_read', ' // some code\n'.repeat(Math.ceil(pasteBytes / 14)).slice(0, pasteBytes)));
  t.assistant('msg_read_done', text('read it'));
  turns(20, 40);
  return t;
}

describe('a line longer than the read block', () => {
  for (const blocks of [3, 4, 6]) {
    it(`trims, analyzes and restores a session with a ${blocks} MiB line`, async () => {
      const input = await writeTranscript(dir, sessionWithPaste(blocks * READ_BLOCK_BYTES), `paste-${blocks}.jsonl`);
      expect((await validateSession(input)).errors).toEqual([]);
      const output = join(dir, `paste-${blocks}.trimmed.jsonl`);
      const store = createFsObjectStore({ root: join(dir, `objects-${blocks}`) });
      const report = await trimSession({ input, output, store, measure: false });
      expect(report.output.bytes).toBeLessThan(report.input.bytes);
      const analysis = await analyzeSession(input);
      expect(analysis.messages).toBeGreaterThan(80);
      expect(analysis.trimmed.tokens).toBeLessThan(analysis.tokens);
      const back = join(dir, `paste-${blocks}.restored.jsonl`);
      await restoreSession({ input: output, output: back, store });
      expect((await readFile(back)).equals(await readFile(input))).toBe(true);
    }, 60_000);
  }
});
