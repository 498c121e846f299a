/**
 * The sessions view's economics table in Chromium against a real `ctxvm serve` app: the table per
 * class and overall and one chart dot per session show the numbers of /v1/sessions/economics (the
 * fixture Claude Code session, a Claude chat and a Codex rollout that pages out); the cache
 * lifetime switch refetches; a dot selects its session; phone width without sideways scrolling.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { RolloutBuilder } from '../../src/session/codex/testing.js';
import type { EconomicsReport } from '../../src/session/economics/economics.js';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { Transcript, text } from '../support/claude-transcript.js';
import { describeWithChromium, horizontalOverflow, newPage, screenshot, type ViewportName } from './browser.js';
import { FIXTURE_SESSION, useConsoleSuite } from './console-env.js';


const CODEX_ID = '0199aaaa-bbbb-7ccc-8ddd-eeeeffff0042';
const CHAT_ID = '22222222-3333-4444-8555-666666666666';

type Economics = Omit<EconomicsReport, 'model'>;

describeWithChromium('console: economics table', () => {
  const suite = useConsoleSuite();

  beforeAll(async () => {
    // older than the fixture, so the fixture stays the newest (selected) session
    const past = new Date(Date.now() - 86_400_000);
    const codexDir = join(dirname(suite.env.claudeConfigDir), 'codex', 'sessions', '2025', '09', '26');
    await mkdir(codexDir, { recursive: true });
    const b = new RolloutBuilder(CODEX_ID).meta().turnContext().user('run the test suite');
    b.shell('npm test', Array.from({ length: 600 }, (_, i) => `ok ${i} - case ${i} passes`).join('\n')).assistant('all pass').user('thanks').assistant('you are welcome');
    const codexFile = join(codexDir, `rollout-2025-09-26T10-00-00-${CODEX_ID}.jsonl`);
    await writeFile(codexFile, b.toString());
    const chat = new Transcript();
    for (let i = 0; i < 4; i++) {
      chat.user(`What about option ${i}?`, { extra: { sessionId: CHAT_ID } });
      chat.assistant(`msg_${i}`, text(`Option ${i} works, with a caveat worth a sentence or two.`), { extra: { sessionId: CHAT_ID } });
    }
    const chatDir = join(suite.env.claudeConfigDir, 'projects', encodeClaudeProjectDir('/tmp/chat-project'));
    await mkdir(chatDir, { recursive: true });
    const chatFile = join(chatDir, `${CHAT_ID}.jsonl`);
    await writeFile(chatFile, chat.text());
    await Promise.all([utimes(codexFile, past, past), utimes(chatFile, past, past)]);
  });

  async function open(viewport: ViewportName, locale = 'en-US'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const { context, page, errors } = await newPage(suite.browser, viewport, { locale });
    await page.goto(`${suite.env.consoleUrl}#key=${encodeURIComponent(suite.env.keys.admin)}`);
    await page.waitForSelector('[data-testid="economics"][data-ready="true"]', { timeout: 90_000 });
    return { page, errors, close: () => context.close() };
  }

  const num = async (page: Page, selector: string, name: string) => Number(await page.locator(selector).first().getAttribute(name));

  async function expectTable(page: Page, e: Economics) {
    for (const key of ['all', 'mixed', 'conversational'] as const) {
      const row = `[data-testid="economics-row-${key}"]`;
      const g = e.groups[key];
      expect(await num(page, row, 'data-n'), key).toBe(g.n);
      expect(await num(page, row, 'data-reduction-mean'), key).toBe(g.reductionMean);
      expect(await num(page, row, 'data-reduction-peak'), key).toBe(g.reductionPeak);
      expect(await num(page, row, 'data-context-mean'), key).toBe(g.contextMean);
      expect(await page.locator(row).getAttribute('data-break-even-mean'), key).toBe(g.breakEvenMean === null ? 'none' : String(g.breakEvenMean));
    }
    const dots = page.getByTestId('economics-dot');
    await expect(dots.count()).resolves.toBe(e.sessions.length);
    for (const s of e.sessions) {
      const dot = page.locator(`[data-testid="economics-dot"][data-file="${s.file}"]`);
      expect(Number(await dot.getAttribute('data-reduction')), s.file).toBe(s.reduction);
      expect(await dot.getAttribute('data-break-even'), s.file).toBe(s.breakEvenTurn === null ? 'never' : String(s.breakEvenTurn));
      expect(await dot.getAttribute('data-class'), s.file).toBe(s.class);
    }
  }

  it('shows the table and one dot per session, as the API computes them', async () => {
    const { page, errors, close } = await open('desktop');
    const e = await suite.env.json<Economics>('GET', '/v1/sessions/economics');
    const { sessions } = await suite.env.json<{ sessions: unknown[] }>('GET', '/v1/sessions');
    expect(e.sessions).toHaveLength(sessions.length);
    expect(e.sessions.map((s) => s.agent).sort()).toEqual(['claude', 'claude', 'codex']);
    expect(e.groups.mixed.n).toBeGreaterThanOrEqual(1);
    expect(e.groups.conversational.n).toBeGreaterThanOrEqual(1);
    // sessions are machine-wide: a user key may not see them
    await expect(suite.env.json('GET', '/v1/sessions/economics', undefined, suite.env.keys.user)).rejects.toThrow(/403/);
    await expectTable(page, e);
    // Codex dots are squares, Claude Code ones circles
    await expect(page.locator('rect[data-testid="economics-dot"]').count()).resolves.toBe(1);
    await expect(page.getByTestId('paper-mark').count()).resolves.toBe(3);
    await expect(page.getByTestId('economics-card').textContent()).resolves.toContain('Mixed tool');
    await page.getByTestId('economics-card').screenshot({ path: screenshot.path('economics-desktop-en') });
    expect(errors).toEqual([]);
    await close();
  });

  it('the 1-hour switch shows the 1-hour table; a dot selects its session', async () => {
    const { page, errors, close } = await open('desktop');
    await page.getByTestId('economics-ttl-1h').click();
    await page.waitForSelector('[data-testid="economics"][data-ready="true"][data-ttl="1h"]', { timeout: 90_000 });
    const e = await suite.env.json<Economics>('GET', '/v1/sessions/economics?ttl=1h');
    expect(e.ttl).toBe('1h');
    await expectTable(page, e);
    await page.locator('rect[data-testid="economics-dot"]').click();
    await page.waitForSelector(`[data-testid="analysis"][data-ref="${CODEX_ID}"][data-ready="true"]`, { timeout: 60_000 });
    expect(await page.locator(`[data-testid="session-item"][data-id="${CODEX_ID}"]`).getAttribute('aria-pressed')).toBe('true');
    expect(errors).toEqual([]);
    await close();
  });

  it('reads in Chinese at phone width without sideways scrolling', async () => {
    const { page, errors, close } = await open('phone', 'zh-CN');
    await expect(page.getByTestId('economics-card').textContent()).resolves.toContain('工具密集');
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await page.getByTestId('economics-card').screenshot({ path: screenshot.path('economics-phone-zh') });
    expect(errors).toEqual([]);
    await close();
  });
});
