/**
 * The corpus file lists the suites walk: every main session the corpus manifest names, in every
 * layout (`.claude/projects`, `config/projects`, `projects/<p>/sessions/`, Codex `sessions/` and
 * `archived_sessions/`), and no subagent transcript.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexCorpusRollouts } from '../../src/session/codex/testing.js';
import { CORPUS_DIR, REPO_ROOT, claudeMainSessions, corpusSkipReason, printSkipReason } from './corpus.js';

const manifest = join(CORPUS_DIR, 'sessions', 'MANIFEST-wild.tsv');
const skip = corpusSkipReason() ?? (existsSync(manifest) ? undefined : `${manifest} not found: manifest checks skipped`);
printSkipReason(skip);

/** Manifest rows: kind, the file's path relative to corpus/sessions. */
function manifestFiles(): { kind: string; rel: string }[] {
  const [header, ...rows] = readFileSync(manifest, 'utf8').trim().split('\n');
  const cols = header!.split('\t');
  return rows.map((r) => {
    const f = Object.fromEntries(r.split('\t').map((v, i) => [cols[i], v]));
    const agent = f.kind!.startsWith('codex') ? 'codex' : 'claude-code';
    return { kind: f.kind!, rel: `${agent}/${f.repo!.replace('/', '__')}/${f['path-in-repo']}` };
  });
}

describe.skipIf(skip !== undefined)('corpus file lists', () => {
  it('claudeMainSessions holds every main Claude Code session of the manifest and none of its subagents', () => {
    const listed = new Set(claudeMainSessions().map((f) => relative(join(CORPUS_DIR, 'sessions'), f)));
    const rows = manifestFiles();
    const mains = rows.filter((r) => r.kind === 'claude-code');
    expect(mains.length).toBeGreaterThan(0);
    for (const r of mains) expect(listed.has(r.rel), r.rel).toBe(true);
    for (const r of rows.filter((x) => x.kind === 'claude-code-subagent' || x.kind === 'claude-code-aux')) expect(listed.has(r.rel), r.rel).toBe(false);
  });

  it('codexCorpusRollouts holds every Codex rollout of the manifest, archived ones included', () => {
    const listed = new Set(codexCorpusRollouts(REPO_ROOT).map((f) => relative(join(CORPUS_DIR, 'sessions'), f)));
    const rollouts = manifestFiles().filter((r) => r.kind === 'codex');
    expect(rollouts.some((r) => r.rel.includes('/archived_sessions/'))).toBe(true);
    for (const r of rollouts) expect(listed.has(r.rel), r.rel).toBe(true);
  });
});
