import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../../../test/support/dag-env.js';
import { discoverSessions } from './discover.js';
import { encodeClaudeProjectDir, latestSessionFor, resolveSessionRef } from './resolve.js';

let env: DagEnv;
beforeEach(async () => {
  env = await createDagEnv();
});
afterEach(async () => {
  await env.close();
});

const discover = () => discoverSessions({ catalog: env.catalog, claudeConfigDir: env.claudeConfigDir, codexHome: env.codexHome });

/** The last uuid written per session id, so appended turns continue the chain as Claude Code's do. */
const chainEnd = new Map<string, string>();

function claudeLines(id: string, cwd: string, turns: number): string {
  const out: string[] = [];
  const line = (fields: Record<string, unknown>, onChain = true) => {
    const uuid = randomUUID();
    out.push(JSON.stringify({ parentUuid: onChain ? chainEnd.get(id) ?? null : null, sessionId: id, cwd, uuid, ...fields }));
    if (onChain) chainEnd.set(id, uuid);
  };
  for (let i = 0; i < turns; i++) {
    line({ type: 'user', message: { role: 'user', content: `q${i}` } });
    // one reply split over two lines (thinking + text) counts once
    line({ type: 'assistant', message: { id: `msg_${i}`, role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] } });
    line({ type: 'assistant', message: { id: `msg_${i}`, role: 'assistant', content: [{ type: 'text', text: 'a'.repeat(20_000) }], stop_reason: 'end_turn' } });
    line({ type: 'user', isSidechain: true, message: { role: 'user', content: 'sub' } }, false);
    line({ type: 'user', isMeta: true, message: { role: 'user', content: 'meta' } });
  }
  return out.join('\n') + '\n';
}

function codexLines(id: string, cwd: string, messages: number): string {
  const out = [JSON.stringify({ timestamp: 't', type: 'session_meta', payload: { id, cwd } })];
  for (let i = 0; i < messages; i++) {
    out.push(JSON.stringify({ timestamp: 't', type: 'response_item', payload: { type: 'message', role: i % 2 ? 'assistant' : 'user', content: [] } }));
    out.push(JSON.stringify({ timestamp: 't', type: 'event_msg', payload: { type: 'token_count' } }));
  }
  return out.join('\n') + '\n';
}

async function putCodex(id: string, content: string): Promise<string> {
  const dir = join(env.codexHome, 'sessions', '2025', '09', '26');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `rollout-2025-09-26T10-00-00-${id}.jsonl`);
  await writeFile(path, content);
  return path;
}

describe('discoverSessions', () => {
  it('indexes once, then re-reads only what changed, and appended files only from their old end', async () => {
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await env.putClaudeSession('/work/p.1', id, claudeLines(id, '/work/p.1', 3));
    const codexId = randomUUID();
    await putCodex(codexId, codexLines(codexId, 'C:\\work\\p', 4));
    const first = await discover();
    expect(first.stats).toMatchObject({ files: 6, probed: 6, appended: 0, removed: 0 });
    const claude = first.sessions.find((s) => s.id === ids[0])!;
    expect(claude).toMatchObject({ agent: 'claude', project: '/work/p.1', messages: 8, messagesExact: true, projectDir: encodeClaudeProjectDir('/work/p.1') });
    expect(first.sessions.find((s) => s.agent === 'codex')).toMatchObject({ id: codexId, project: 'C:\\work\\p', messages: 4 });

    expect((await discover()).stats).toMatchObject({ probed: 0 });

    await appendFile(claude.path, claudeLines(ids[0]!, '/work/p.1', 2) + JSON.stringify({ type: 'summary', summary: 'Refactor the parser', leafUuid: 'x' }) + '\n');
    const third = await discover();
    expect(third.stats).toMatchObject({ probed: 1, appended: 1 });
    expect(third.sessions.find((s) => s.id === ids[0])).toMatchObject({ messages: 12, title: 'Refactor the parser' });

    // the title Claude Code gives a session itself wins over a summary
    await appendFile(claude.path, JSON.stringify({ type: 'ai-title', aiTitle: 'Fix the parser crash', sessionId: ids[0] }) + '\n');
    expect((await discover()).sessions.find((s) => s.id === ids[0])).toMatchObject({ messages: 12, title: 'Fix the parser crash' });

    // rewritten in place (not an append): read again from the start
    await writeFile(claude.path, claudeLines(ids[0]!, '/work/p.1', 1) + JSON.stringify({ type: 'custom-title', customTitle: 'renamed' }) + '\n');
    const fourth = await discover();
    expect(fourth.stats).toMatchObject({ probed: 1, appended: 0 });
    expect(fourth.sessions.find((s) => s.id === ids[0])).toMatchObject({ messages: 4, title: 'renamed' });

    await rm(claude.path);
    const fifth = await discover();
    expect(fifth.stats).toMatchObject({ removed: 1, files: 5 });
    expect((await env.catalog.listIndexedFiles()).length).toBe(5);
  });

  it('counts an unterminated last line that parses, but resumes from the last complete line', async () => {
    const id = randomUUID();
    const full = claudeLines(id, '/p', 2);
    const path = await env.putClaudeSession('/p', id, full.slice(0, -1)); // no final newline
    expect((await discover()).sessions[0]!.messages).toBe(6);
    await appendFile(path, '\n' + claudeLines(id, '/p', 1));
    const again = await discover();
    expect(again.stats.appended).toBe(1);
    expect(again.sessions[0]!.messages).toBe(8);
  });

  it('indexes agent-*.jsonl beside sessions as subagents of their session', async () => {
    const id = randomUUID();
    const path = await env.putClaudeSession('/p', id, claudeLines(id, '/p', 1));
    await writeFile(join(path, '..', 'agent-abc.jsonl'), JSON.stringify({ type: 'user', isSidechain: true, sessionId: id, message: { content: 'Warmup' } }) + '\n');
    const { sessions } = await discover();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.siblingFiles).toEqual([join(path, '..', 'agent-abc.jsonl')]);
  });
});

describe('layouts seen in the wild', () => {
  it('finds sessions in a project folder\'s sessions/ and Codex archived_sessions/; nested subagent transcripts are subagents of their session', async () => {
    const projectDir = encodeClaudeProjectDir('/home/u/app');
    const folder = join(env.claudeConfigDir, 'projects', projectDir);
    const main = randomUUID();
    const other = randomUUID();
    await mkdir(join(folder, 'sessions'), { recursive: true });
    const mainPath = join(folder, 'sessions', `${main}.jsonl`);
    await writeFile(mainPath, claudeLines(main, '/home/u/app', 2));
    await writeFile(join(folder, `${other}.jsonl`), claudeLines(other, '/home/u/app', 1));
    // 2.1.x subagents under <sessionId>/subagents/ and workflow agents under subagents/<sessionId>/workflows/<wf>/
    const sub = (dir: string, name: string) => mkdir(dir, { recursive: true }).then(() => writeFile(join(dir, name), JSON.stringify({ type: 'user', isSidechain: true, sessionId: main, message: { content: 'task' } }) + '\n'));
    await sub(join(folder, main, 'subagents'), 'agent-a1.jsonl');
    await sub(join(folder, 'subagents', main, 'workflows', 'wf_1'), 'agent-a2.jsonl');
    await writeFile(join(folder, 'subagents', main, 'workflows', 'wf_1', 'journal.jsonl'), '{"type":"started"}\n');
    const archived = join(env.codexHome, 'archived_sessions');
    await mkdir(archived, { recursive: true });
    const codexId = randomUUID();
    const codexPath = join(archived, `rollout-2026-03-24T21-27-50-${codexId}.jsonl`);
    await writeFile(codexPath, codexLines(codexId, '/home/u/app', 2));

    const { sessions, stats } = await discover();
    expect(stats.files).toBe(5);
    expect(sessions.map((s) => s.path).sort()).toEqual([mainPath, join(folder, `${other}.jsonl`), codexPath].sort());
    const m = sessions.find((s) => s.id === main)!;
    expect(m).toMatchObject({ agent: 'claude', project: '/home/u/app', projectDir, messages: 6 });
    expect(m.siblingFiles).toEqual([join(folder, main, 'subagents', 'agent-a1.jsonl'), join(folder, 'subagents', main, 'workflows', 'wf_1', 'agent-a2.jsonl')].sort());
    expect(sessions.find((s) => s.id === other)!.siblingFiles).toBeUndefined();
    expect(sessions.find((s) => s.agent === 'codex')).toMatchObject({ id: codexId, messages: 2 });

    // a removed archived rollout leaves the index
    await rm(codexPath);
    expect((await discover()).stats).toMatchObject({ removed: 1, files: 4 });
  });
});

describe('session references', () => {
  it('resolves ids, prefixes, paths and --latest, with clear errors', async () => {
    const a = 'aaaa1111-0000-4000-8000-000000000001';
    const b = 'aaaa2222-0000-4000-8000-000000000002';
    await env.putClaudeSession('/w/app', a, claudeLines(a, '/w/app', 1));
    await new Promise((r) => setTimeout(r, 20));
    await env.putClaudeSession('/w/app', b, claudeLines(b, '/w/app', 1));
    const outside = join(env.root, 'loose.jsonl');
    await writeFile(outside, claudeLines('cccc', '/elsewhere', 1));
    const { sessions } = await discover();
    const opts = { sessions, cwd: '/w/app/src' };
    expect((await resolveSessionRef(a, false, opts)).id).toBe(a);
    expect((await resolveSessionRef('aaaa2', false, opts)).id).toBe(b);
    await expect(resolveSessionRef('aaaa', false, opts)).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('ambiguous') });
    await expect(resolveSessionRef('zzzzzz', false, opts)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    expect(await resolveSessionRef(outside, false, opts)).toMatchObject({ id: 'cccc', project: '/elsewhere', messages: 4, messagesExact: true });
    // the cwd is inside the project: the closest enclosing project's newest session
    expect((await resolveSessionRef(undefined, true, opts)).id).toBe(b);
    expect(latestSessionFor('/w/app', sessions)?.id).toBe(b);
    expect(latestSessionFor('/w', sessions)).toBeUndefined();
    await expect(resolveSessionRef(undefined, true, { sessions, cwd: '/nowhere' })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });
});
