/**
 * Sessions view in Chromium against a real `ctxvm serve` app: the session list and the snapshot
 * DAG match /v1/sessions and /v1/sessions/tree; the composition bars, legend and cost curve show
 * the numbers of /v1/sessions/analysis for the fixture session; snapshot, branch (trimmed) and
 * page-in run from their buttons and their results appear; both layouts, both languages.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { findStubs } from '../../src/session/trim/stub-scan.js';
import { describeWithChromium, horizontalOverflow, newPage, screenshot, sessionValues, VIEWPORTS, type ViewportName } from './browser.js';
import { useConsoleSuite, FIXTURE_SESSION } from './console-env.js';

const CATEGORIES = ['userText', 'assistantText', 'toolInput', 'toolResult', 'image', 'thinking', 'system'] as const;


describeWithChromium('console: sessions view', () => {
  const suite = useConsoleSuite();

  async function open(viewport: ViewportName, locale = 'en-US'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const { context, page, errors } = await newPage(suite.browser, viewport, { locale });
    await page.goto(`${suite.env.consoleUrl}#key=${encodeURIComponent(suite.env.keys.admin)}`);
    await page.waitForSelector('[data-testid="analysis"][data-ready="true"]', { timeout: 60_000 });
    return { page, errors, close: () => context.close() };
  }

  const attr = (page: Page, selector: string, name: string) => page.locator(selector).first().getAttribute(name);

  it('moves the #key= fragment into sessionStorage and shows the admin views', async () => {
    const { page, errors, close } = await open('desktop');
    expect(new URL(page.url()).hash).toBe('#/sessions');
    expect(page.url()).not.toContain(suite.env.keys.admin);
    expect(await sessionValues(page)).toContain(suite.env.keys.admin);
    expect(await page.getByTestId('who').getAttribute('data-admin')).toBe('true');
    for (const v of ['sessions', 'memory', 'metrics']) await expect(page.getByTestId(`nav-${v}`).isVisible()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await close();
  });

  it('lists the sessions and draws composition and cost numbers from the analysis', async () => {
    const { page, errors, close } = await open('desktop');
    const { sessions } = await suite.env.json<{ sessions: { id: string; messages: number }[] }>('GET', '/v1/sessions');
    await expect(page.getByTestId('session-item').count()).resolves.toBe(sessions.length);
    expect(await page.getByTestId('session-item').first().getAttribute('data-id')).toBe(FIXTURE_SESSION.id);

    const a = await suite.env.json('GET', `/v1/sessions/analysis?session=${FIXTURE_SESSION.id}`);
    expect(await attr(page, '[data-testid="analysis"]', 'data-ref')).toBe(FIXTURE_SESSION.id);
    expect(Number(await attr(page, '[data-testid="total-before"]', 'data-value'))).toBe(a.tokens);
    expect(Number(await attr(page, '[data-testid="total-after"]', 'data-value'))).toBe(a.trimmed.tokens);
    expect(Number(await attr(page, '[data-testid="reduction"]', 'data-value'))).toBe(a.trimmed.reduction);
    expect(await page.getByTestId('total-before').textContent()).toBe(a.tokens.toLocaleString('en-US'));
    for (const c of CATEGORIES) {
      const row = page.getByTestId(`legend-${c}`);
      expect(Number(await row.getAttribute('data-before')), c).toBe(a.breakdown[c]);
      expect(Number(await row.getAttribute('data-after')), c).toBe(a.trimmed.breakdown[c]);
      await expect(row.textContent()).resolves.toContain(a.breakdown[c].toLocaleString('en-US'));
      // a segment per non-empty category, each as tall as its share
      const segments = page.getByTestId(`segment-before-${c}`);
      await expect(segments.count()).resolves.toBe(a.breakdown[c] > 0 ? 1 : 0);
    }
    // trimming pages tool output out: the after column is shorter than the before column
    const hBefore = Number(await page.getByTestId('segment-before-toolResult').getAttribute('height'));
    const hAfter = Number(await page.getByTestId('segment-after-toolResult').getAttribute('height'));
    expect(hAfter).toBeLessThan(hBefore);

    expect(a.cache.scenarios).toHaveLength(4);
    for (const s of a.cache.scenarios) {
      await page.getByTestId(`ttl-${s.ttl}`).click();
      await page.getByTestId(s.untrimmedCacheWarm ? 'cache-warm' : 'cache-cold').click();
      expect(await attr(page, '[data-testid="analysis"]', 'data-scenario')).toBe(`${s.ttl}-${s.untrimmedCacheWarm ? 'warm' : 'cold'}`);
      expect(Number(await attr(page, '[data-testid="cost-curve"]', 'data-turns'))).toBe(s.cumulativeUsd.trimmed.length);
      expect(Number(await attr(page, '[data-testid="cost-line-untrimmed"]', 'data-value'))).toBe(s.cumulativeUsd.untrimmed.at(-1));
      expect(Number(await attr(page, '[data-testid="cost-line-trimmed"]', 'data-value'))).toBe(s.cumulativeUsd.trimmed.at(-1));
      expect(Number(await attr(page, '[data-testid="per-turn-saving"]', 'data-value'))).toBe(s.perTurnSavingUsd);
      const be = await attr(page, '[data-testid="break-even"]', 'data-value');
      if (s.breakEvenTurn === null) expect(be).toBe('none');
      else {
        expect(Number(be)).toBe(s.breakEvenTurn);
        await expect(page.getByTestId('break-even').textContent()).resolves.toBe(`Break-even: turn ${s.breakEvenTurn}`);
      }
    }
    await page.getByTestId('cost-card').screenshot({ path: screenshot.path('sessions-cost-last-scenario-desktop-en') });
    expect(errors).toEqual([]);
    await close();
  });

  it('snapshot, branch and page-in from their buttons; the DAG follows the tree route', async () => {
    const { page, errors, close } = await open('desktop');
    await expect(page.getByTestId('dag-node').count()).resolves.toBe(0);

    await page.getByTestId('snapshot-name').fill('console-snap');
    await page.getByTestId('snapshot-button').click();
    const result = page.getByTestId('action-result');
    await result.and(page.locator('[data-action="snapshot"]')).waitFor();
    expect(await result.getAttribute('data-ok')).toBe('true');
    await expect(result.textContent()).resolves.toContain('Snapshot “console-snap” saved');
    const snapNode = page.locator('[data-testid="dag-node"][data-name="console-snap"]');
    await snapNode.waitFor();
    expect(await snapNode.getAttribute('data-kind')).toBe('snapshot');
    // the new snapshot is selected: its analysis loads, and the tree then knows its tokens
    await page.waitForSelector('[data-testid="analysis"][data-ref="snapshot:console-snap"][data-ready="true"]', { timeout: 60_000 });
    const snapAnalysis = await suite.env.json('GET', '/v1/sessions/analysis?session=snapshot:console-snap');
    expect(Number(await attr(page, '[data-testid="total-before"]', 'data-value'))).toBe(snapAnalysis.tokens);

    await page.getByTestId('branch-snapshot').selectOption('console-snap');
    await page.getByTestId('branch-name').fill('console-branch');
    expect(await page.getByTestId('branch-trim').isChecked()).toBe(true);
    await page.getByTestId('branch-button').click();
    await result.and(page.locator('[data-action="branch"]')).waitFor({ timeout: 60_000 });
    expect(await result.getAttribute('data-ok')).toBe('true');
    await page.locator('[data-testid="dag-node"][data-name="console-branch"]').waitFor();

    const tree = await suite.env.json<{ nodes: { id: string; name: string; kind: string; tokens?: number | null; path?: string }[]; edges: { from: string; to: string }[] }>('GET', '/v1/sessions/tree');
    await expect(page.getByTestId('dag-node').count()).resolves.toBe(tree.nodes.length);
    await expect(page.getByTestId('dag-edge').count()).resolves.toBe(tree.edges.length);
    const snap = tree.nodes.find((n) => n.name === 'console-snap')!;
    const branch = tree.nodes.find((n) => n.name === 'console-branch')!;
    expect(tree.edges).toContainEqual(expect.objectContaining({ from: snap.id, to: branch.id }));
    await page.locator(`[data-testid="dag-edge"][data-from="${snap.id}"][data-to="${branch.id}"]`).waitFor({ state: 'attached' });
    expect(snap.tokens).toBe(snapAnalysis.tokens);
    expect(Number(await snapNode.getAttribute('data-tokens'))).toBe(snap.tokens);
    await expect(snapNode.textContent()).resolves.toContain(`${snap.tokens!.toLocaleString('en-US')} tokens`);
    const resume = await page.getByTestId('resume-command').textContent();
    expect(resume).toContain((await suite.env.json('GET', '/v1/sessions')).sessions.find((s: { path: string }) => s.path === branch.path)?.id ?? '<branch session>');

    // a stub of the trimmed branch names the payload it replaced
    const text = await readFile(branch.path!, 'utf8');
    const ref = text.split('\n').filter(Boolean).flatMap((l) => findStubs(JSON.parse(l))).map((f) => f.ref)[0];
    expect(ref, 'the trimmed branch has page-in stubs').toBeDefined();
    await page.getByTestId('page-in-ref').fill(ref!);
    await page.getByTestId('page-in-button').click();
    await result.and(page.locator('[data-action="page-in"]')).waitFor();
    expect(await result.getAttribute('data-ok')).toBe('true');
    const paged = await suite.env.json('GET', `/v1/sessions/page-in/${encodeURIComponent(ref!)}`);
    const shown = await page.getByTestId('page-in-content').textContent();
    expect(shown).toBe(typeof paged.content === 'string' ? paged.content : JSON.stringify(paged.content, null, 2));

    await screenshot(page, 'sessions-desktop-en');
    expect(errors).toEqual([]);
    await close();
  });

  it('a failed action shows the server error', async () => {
    const { page, close } = await open('desktop');
    await page.getByTestId('page-in-ref').fill('ctxvm:nonsense');
    await page.getByTestId('page-in-button').click();
    const result = page.locator('[data-testid="action-result"][data-action="page-in"]');
    await result.waitFor();
    expect(await result.getAttribute('data-ok')).toBe('false');
    await expect(result.textContent()).resolves.toMatch(/^(400|404) E_/);
    await close();
  });

  for (const viewport of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`reads in Chinese at ${viewport} width without sideways scrolling`, async () => {
      const { page, errors, close } = await open(viewport, 'zh-CN');
      // the fixture session (the branch made above is newer and listed first)
      await page.locator(`[data-testid="session-item"][data-id="${FIXTURE_SESSION.id}"]`).click();
      await page.waitForSelector(`[data-testid="analysis"][data-ref="${FIXTURE_SESSION.id}"][data-ready="true"]`);
      await expect(page.getByTestId('nav-sessions').textContent()).resolves.toBe('会话');
      await expect(page.getByTestId('composition-card').textContent()).resolves.toContain('精简前');
      await expect(page.getByTestId('legend-toolResult').textContent()).resolves.toContain('工具输出');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `sessions-${viewport}-zh`);
      // switch to English: remembered across a reload
      await page.getByTestId('lang-en').click();
      await expect(page.getByTestId('nav-sessions').textContent()).resolves.toBe('Sessions');
      await page.reload();
      await page.locator(`[data-testid="session-item"][data-id="${FIXTURE_SESSION.id}"]`).click();
      await page.waitForSelector(`[data-testid="analysis"][data-ref="${FIXTURE_SESSION.id}"][data-ready="true"]`);
      await expect(page.getByTestId('composition-card').textContent()).resolves.toContain('Before trim');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `sessions-${viewport}-en`);
      expect(errors).toEqual([]);
      await close();
    });
  }
});
