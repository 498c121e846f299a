/**
 * "messages" means one thing in every view: the messages the agent resends on resume. The quick
 * count of the sessions index (probe.ts) must agree with the reconstruction (`session analyze`,
 * `info`) on sessions with compactions, split replies, parallel tool results and rollbacks.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../demo/claude-session.js';
import { codexDriver } from '../codex/driver.js';
import { RolloutBuilder } from '../codex/testing.js';
import { loadSession, registerSessionDriver } from '../session.js';
import { probeSessionFile } from './probe.js';
import { indexFile } from './discover.js';

registerSessionDriver(codexDriver);
const dir = mkdtempSync(join(tmpdir(), 'ctxvm-messages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function counts(text: string): Promise<{ listed: number; resent: number }> {
  const file = join(dir, `s-${++n}.jsonl`);
  writeFileSync(file, text);
  const loaded = await loadSession(file);
  const probe = await probeSessionFile(file, { agent: loaded.agent, size: statSync(file).size });
  return { listed: probe.view.messages, resent: loaded.context.entries.length };
}

describe('the sessions list counts the messages the agent resends', () => {
  it('Claude Code: compaction, split assistant replies, parallel tool results', async () => {
    for (const turns of [1, 2, 3, 7]) {
      const c = await counts(buildDemoClaudeSession({ turns }).join('\n') + '\n');
      expect(c.listed, `${turns} turns`).toBe(c.resent);
    }
  });

  it('Codex: calls, reasoning, compaction with and without replacement history, rollback', async () => {
    const r = new RolloutBuilder().meta().turnContext().environment().user('first').reasoning('think').shell('ls', 'a\nb').assistant('done');
    expect((await counts(r.toString())).listed).toBe((await counts(r.toString())).resent);
    r.compacted('summary so far').user('second').shell('cat a', 'x').assistant('ok');
    let c = await counts(r.toString());
    expect(c.listed).toBe(c.resent);
    r.compacted('again', [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'kept' }] }]).user('third').assistant('fine');
    c = await counts(r.toString());
    expect(c.listed).toBe(c.resent);
    r.user('fourth').assistant('sure').event('thread_rolled_back', { num_turns: 1 });
    c = await counts(r.toString());
    expect(c.listed).toBe(c.resent);
  });
});

describe('the sessions index counts exactly where the quick count cannot', () => {
  it('a rewound Claude Code conversation: the index agrees with the reconstruction, the quick count does not', async () => {
    const lines = buildDemoClaudeSession({ turns: 3 });
    // the user rewound to the first prompt and asked again: a new user line whose parent is the
    // first line's parent, then a reply; what follows the first prompt is off the resumed chain
    const first = JSON.parse(lines.find((l) => l.includes('"type":"user"'))!) as Record<string, unknown>;
    const again = { ...first, uuid: '00000000-0000-4000-8000-00000000aa01', message: { role: 'user', content: 'Ask again, differently.' }, timestamp: '2026-11-30T10:00:00.000Z' };
    const replyTemplate = JSON.parse(lines.find((l) => l.includes('"type":"assistant"'))!) as Record<string, any>;
    const reply = { ...replyTemplate, parentUuid: again.uuid, uuid: '00000000-0000-4000-8000-00000000aa02', message: { ...replyTemplate.message, id: 'msg_rewound', content: [{ type: 'text', text: 'Sure.' }], stop_reason: 'end_turn' }, timestamp: '2026-11-30T10:00:01.000Z' };
    const text = [...lines, JSON.stringify(again), JSON.stringify(reply)].join('\n') + '\n';
    const c = await counts(text);
    expect(c.resent).toBe(2);
    expect(c.listed).not.toBe(c.resent); // the quick count follows the file, not the chain
    const file = join(dir, `s-${n}.jsonl`);
    const { size, mtimeMs } = statSync(file);
    const { row } = await indexFile({ path: file, agent: 'claude', role: 'main', projectDir: null }, size, mtimeMs, undefined, Date.now());
    expect(row.messages).toBe(c.resent);
    expect(JSON.parse(row.scanState).resent).toBe(c.resent);
  });
});
