/**
 * The real agents are the judges: every corpus session is resumed in the real Claude Code and
 * Codex CLIs (through ../shared/tools/*-resume-probe.mjs), original and trimmed by ctxvm. Our
 * reconstruction must agree with what the agent sends (same messages, roles and tool pairing),
 * and the trimmed file must resume with no findings and the same structure.
 * Needs the npm registry once to install the CLIs into ~/.cache/ctxvm-agents. CI runs it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { claudeMainSessions, CORPUS_DIR } from '../support/corpus.js';
import { installAgentClis, probe, claudeFileMessages, claudeShape, SHARED_TOOLS, type AgentBins } from '../support/agent-probes.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { trimSession } from '../../src/session/session.js';
import { scanClaudeSession } from '../../src/session/claude/scan.js';
import { reconstructClaudeContext } from '../../src/session/claude/context.js';
import { createTokenCounter } from '../../src/text/tokens.js';

const counter = createTokenCounter();

const haveShared = existsSync(CORPUS_DIR) && existsSync(join(SHARED_TOOLS, 'claude-resume-probe.mjs'));
const enabled = haveShared && (process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1');
if (!enabled) {
  console.warn(
    haveShared
      ? 'skipping real-agent resume tests: set CTXVM_AGENT_TESTS=1 (CI runs them; they install Claude Code and Codex into ~/.cache/ctxvm-agents)'
      : 'skipping real-agent resume tests: ../shared (corpus and probes) not found',
  );
}

describe.skipIf(!enabled)('Claude Code resumes what ctxvm reconstructs and trims', () => {
  let bins: AgentBins;
  let dir: string;
  beforeAll(async () => {
    bins = await installAgentClis();
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-agent-'));
  }, 600_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // summary-only stubs carry no sessionId: no agent can resume them, so they are not judged here
  const sessions = haveShared ? claudeMainSessions().filter((f) => readFileSync(f, 'utf8').includes('"sessionId"')) : [];
  it.each(sessions.map((f) => [basename(f), f]))(
    '%s',
    async (_name, file) => {
      const index = await scanClaudeSession(file);
      const original = await probe('claude', file, bins);
      // "empty-content" findings of the probe concern system entries the CLI itself adds
      expect(original.findings.filter((f) => f.rule !== 'empty-content')).toEqual([]);

      // 1. our reconstruction = what Claude Code sends for the file
      const ours = await reconstructClaudeContext(index);
      const sent = claudeFileMessages(original.request);
      expect(claudeShape(ours.messages.map((m) => ({ role: m.role, content: m.content as never })))).toEqual(claudeShape(sent));

      // 2. the trimmed file resumes with no findings and the same structure
      const store = createFsObjectStore({ root: join(dir, 'objects'), durability: 'deferred' });
      const out = join(dir, basename(file));
      const report = await trimSession({ input: file, output: out, store });
      expect(report.valid).toBe(true);
      const trimmed = await probe('claude', out, bins);
      expect(trimmed.findings.filter((f) => f.rule !== 'empty-content')).toEqual([]);
      expect(claudeShape(claudeFileMessages(trimmed.request))).toEqual(claudeShape(sent));
      // tokens of the file-derived messages (the CLI's own reminders name a random temp dir, so the
      // probe's whole-request count wobbles by a token between runs)
      const before = counter.count(JSON.stringify(sent));
      const after = counter.count(JSON.stringify(claudeFileMessages(trimmed.request)));
      expect(after).toBeLessThanOrEqual(before);
      console.log(`${basename(file)}: Claude Code sends ${before} → ${after} tokens of file-derived messages (o200k, −${(100 * (1 - after / before)).toFixed(1)}%)`);
    },
    600_000,
  );
});
