/**
 * Line types and fields of newer agent versions (../shared/formats.md "Seen in the wild") never
 * make a trim fail: known ones pass through as they are, an unknown one is kept verbatim and
 * named in the report, and the output adds no finding and restores to the input byte for byte.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../demo/claude-session.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { RolloutBuilder } from '../codex/testing.js';
import { loadSession, trimSession } from '../session.js';
import { restoreSession } from './restore.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-line-types-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const errorsOf = async (file: string) =>
  (await loadSession(file)).findings
    .filter((f) => f.severity === 'error')
    .map((f) => f.rule)
    .sort();

async function trimAndRestore(name: string, text: string) {
  const input = join(dir, `${name}.jsonl`);
  await writeFile(input, text);
  const store = createFsObjectStore({ root: join(dir, `${name}-objects`) });
  const output = join(dir, `${name}-trimmed.jsonl`);
  const report = await trimSession({ input, output, store });
  const back = join(dir, `${name}-restored.jsonl`);
  const trimmed = (await readFile(output, 'utf8')).includes('"ctxvm":{');
  await restoreSession({ input: output, output: back, store, allowUntrimmed: !trimmed });
  return { input, output, report, trimmedLines: (await readFile(output, 'utf8')).split('\n').filter(Boolean), restored: await readFile(back), original: await readFile(input) };
}

describe('line types of newer agent versions', () => {
  it('Claude Code: titles, bridges, links, fork refs and new system subtypes pass through; an unknown type is named', async () => {
    const base = buildDemoClaudeSession({ turns: 4 }).map((l) => JSON.parse(l) as Record<string, unknown>);
    const sessionId = String(base.find((l) => typeof l.sessionId === "string")!.sessionId);
    const at = (i: number) => base[i] as { uuid?: string; timestamp?: string };
    const last = base.filter((l) => typeof l.uuid === 'string').at(-1)!;
    const extra = [
      { type: 'ai-title', sessionId, aiTitle: 'Fix the healthz route' },
      { type: 'custom-title', sessionId, customTitle: 'healthz' },
      { type: 'bridge-session', sessionId, bridgeSessionId: 'b-1', lastSequenceNum: 7 },
      { type: 'file-history-delta', sessionId, snapshotMessageId: at(1).uuid, trackingPath: 'src/server.ts' },
      { type: 'pr-link', sessionId, prNumber: 12, prUrl: 'https://example.com/pr/12' },
      { type: 'holographic-memo', sessionId, note: 'a line type no version has written yet' },
      { type: 'fork-context-ref', sessionId, parentSessionId: '00000000-0000-4000-8000-000000000000', parentLastUuid: at(1).uuid, contextLength: 2 },
    ];
    const system = (subtype: string, parentUuid: unknown, n: number) => ({
      parentUuid,
      isSidechain: false,
      type: 'system',
      subtype,
      content: `${subtype} happened`,
      level: 'info',
      uuid: `5157e000-0000-4000-8000-00000000000${n}`,
      timestamp: last.timestamp,
      sessionId,
      cwd: last.cwd,
      version: last.version,
    });
    const away = system('away_summary', last.uuid, 1);
    const apiError = system('api_error', away.uuid, 2);
    const lines = [extra[6], ...base.slice(0, 2), extra[0], extra[1], ...base.slice(2), extra[2], extra[3], extra[4], away, apiError, extra[5]];
    const r = await trimAndRestore('claude', lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    expect(r.report.unknownLineTypes).toEqual(['holographic-memo']);
    // each such line stays as it was; it may carry the restore record of removed lines before it
    const withoutRecord = (t: string) => {
      const { ctxvm: _record, ...rest } = JSON.parse(t) as Record<string, unknown>;
      return rest;
    };
    for (const l of extra) expect(r.trimmedLines.filter((t) => t.includes(`"type":"${String(l.type)}"`)).map(withoutRecord), String(l.type)).toEqual([l]);
    expect(await errorsOf(r.output)).toEqual(await errorsOf(r.input));
    expect(r.restored.equals(r.original)).toBe(true);
  });

  it('Codex: world_state, rollbacks, ghost snapshots and tool-search items pass through; an unknown type is named', async () => {
    const big = Array.from({ length: 300 }, (_, i) => `row ${i}: ${'value '.repeat(12)}`).join('\n');
    const b = new RolloutBuilder()
      .meta()
      .line('world_state', { agents_md: '# AGENTS.md\nbe brief', environment: { cwd: '/work/demo' } })
      .turnContext()
      .user('list the rows')
      .item({ type: 'tool_search_call', call_id: 'ts_1', query: 'rows' })
      .item({ type: 'tool_search_output', call_id: 'ts_1', tools: [{ name: 'shell' }] })
      .shell('cat rows.txt', big)
      .assistant('There are 300 rows.')
      .ghostSnapshot()
      .event('thread_settings_applied', { model: 'gpt-5.1-codex' })
      .line('quantum_state', { note: 'a line type no version has written yet' })
      .user('and the first one?')
      .assistant('row 0.');
    const r = await trimAndRestore('codex', b.toString());

    expect(r.report.unknownLineTypes).toEqual(['quantum_state']);
    const kept = (type: string) => r.trimmedLines.filter((l) => l.includes(`"${type}"`)).length;
    for (const type of ['world_state', 'tool_search_call', 'tool_search_output', 'quantum_state']) expect(kept(type), type).toBe(1);
    expect(r.trimmedLines.some((l) => l.includes('[ctxvm paged out'))).toBe(true);
    expect(await errorsOf(r.output)).toEqual(await errorsOf(r.input));
    expect(r.restored.equals(r.original)).toBe(true);
  });
});
