/**
 * Metrics view in Chromium against a real `ctxvm serve` app after the seed messages: stage
 * latencies, token savings, hot-tier and rebuild-cache hit rates and extraction counts by intent
 * are the numbers of /v1/metrics; both layouts, both languages.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeWithChromium, horizontalOverflow, newPage, screenshot, VIEWPORTS, type ViewportName } from './browser.js';
import { useConsoleSuite, SEED_MESSAGES, SEED_MORE } from './console-env.js';

const STAGES = ['extract', 'update', 'rebuild', 'respond', 'total'] as const;

describeWithChromium('console: metrics view', () => {
  const suite = useConsoleSuite();

  async function open(viewport: ViewportName, locale = 'en-US'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const { context, page, errors } = await newPage(suite.browser, viewport, { locale });
    await page.goto(`${suite.env.consoleUrl}#key=${encodeURIComponent(suite.env.keys.admin)}`);
    await page.getByTestId('who').waitFor();
    await page.getByTestId('nav-metrics').click();
    await page.waitForSelector('[data-testid="metrics"]');
    return { page, errors, close: () => context.close() };
  }

  const num = async (page: Page, testid: string, name = 'data-value') => Number(await page.getByTestId(testid).first().getAttribute(name));

  it('shows the numbers /v1/metrics reports for the seeded messages', async () => {
    const { page, errors, close } = await open('desktop');
    // read after the page: the metrics below only move when messages are processed
    const m = await suite.env.json('GET', '/v1/metrics');
    const messages = SEED_MESSAGES.length + SEED_MORE.length;
    for (const stage of STAGES) {
      const st = m.stages[stage];
      expect(st.count, stage).toBe(messages);
      expect(await num(page, `stage-${stage}`, 'data-count')).toBe(st.count);
      for (const p of ['p50', 'p95', 'p99'] as const) expect(await num(page, `latency-${stage}-${p}`), `${stage} ${p}`).toBe(st[`${p}Ms`]);
    }
    expect(await num(page, 'savings-ratio')).toBe(m.tokens.savingsRatio);
    expect(await num(page, 'tokens-context')).toBe(m.tokens.context);
    expect(await num(page, 'tokens-full')).toBe(m.tokens.fullHistory);
    await expect(page.getByTestId('tokens-context').textContent()).resolves.toContain(m.tokens.context.toLocaleString('en-US'));
    expect(await num(page, 'rebuild-hit')).toBe(m.rebuildCache.hit);
    expect(await num(page, 'rebuild-miss')).toBe(m.rebuildCache.miss);
    if (m.hotCache) {
      expect(await num(page, 'hot-hit-rate')).toBeCloseTo(m.hotCache.hitRatio, 6);
      expect(await num(page, 'hot-counts', 'data-hits')).toBe(m.hotCache.hits);
      // memory reads move with reads too (the page's were earlier): never more than the later JSON
      expect(await num(page, 'memory-reads', 'data-hits')).toBeLessThanOrEqual(m.memoryReads.hits);
      expect(await num(page, 'memory-reads', 'data-misses')).toBeGreaterThan(0);
    } else await expect(page.getByTestId('hot-hit-rate').count()).resolves.toBe(0);
    const intents = Object.entries(m.extractions as Record<string, number>);
    expect(intents.reduce((s, [, n]) => s + n, 0)).toBe(messages);
    for (const [intent, n] of intents) expect(await num(page, `intent-${intent}`), intent).toBe(n);
    await expect(page.getByTestId('extractions').locator('.bar-row').count()).resolves.toBe(intents.length);
    expect(await num(page, 'requests-total')).toBeGreaterThanOrEqual(messages);
    expect(errors).toEqual([]);
    await close();
  });

  for (const viewport of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`reads in both languages at ${viewport} width without sideways scrolling`, async () => {
      const { page, errors, close } = await open(viewport, 'zh-CN');
      await expect(page.getByTestId('latency-card').locator('h2').textContent()).resolves.toBe('阶段延迟');
      await expect(page.getByTestId('extractions-card').textContent()).resolves.toContain('创建任务');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `metrics-${viewport}-zh`);
      await page.getByTestId('lang-en').click();
      await expect(page.getByTestId('latency-card').locator('h2').textContent()).resolves.toBe('Stage latency');
      await expect(page.getByTestId('extractions-card').textContent()).resolves.toContain('create task');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `metrics-${viewport}-en`);
      expect(errors).toEqual([]);
      await close();
    });
  }
});
