/**
 * Memory view and the API key flow in Chromium against a real `ctxvm serve` app: a user key sees
 * only its own memory view; the board, the records and their histories match
 * /v1/users/{user}/memory for the Chinese seed; the context preview shows the layers, the dropped
 * items and the cache-stable prefix of /v1/users/{user}/context; a rejected key sends you back to
 * sign-in; both layouts, both languages.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { describeWithChromium, horizontalOverflow, newPage, screenshot, sessionValues, type ViewportName } from './browser.js';
import { useConsoleSuite, SEED_MESSAGES, SEED_USER } from './console-env.js';

const STATUSES = ['todo', 'doing', 'done', 'cancelled'] as const;
const QUESTION = SEED_MESSAGES[2]!;

describeWithChromium('console: memory view and sign-in', () => {
  const suite = useConsoleSuite();
  let memory: any;

  beforeAll(async () => {
    memory = await suite.env.json('GET', `/v1/users/${SEED_USER}/memory`, undefined, suite.env.keys.user);
  });

  async function open(viewport: ViewportName, key: string, locale = 'en-US'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const { context, page, errors } = await newPage(suite.browser, viewport, { locale });
    await page.goto(`${suite.env.consoleUrl}#key=${encodeURIComponent(key)}`);
    await page.getByTestId('who').waitFor();
    // an admin key lands on the sessions view
    if (key === suite.env.keys.admin) await page.goto(`${suite.env.consoleUrl}#/memory`);
    await page.waitForSelector('[data-testid="memory"]');
    return { page, errors, close: () => context.close() };
  }

  /** Formats like the console (en-CA style, 24 h) in the user's zone, for comparing text. */
  const shown = (page: Page, iso: string) =>
    page.evaluate(
      ([at, timeZone]) => new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(new Date(at!)).replace(',', ''),
      [iso, memory.timeZone as string],
    );

  it('the seed gives a known memory state', () => {
    // 下午三点 review meeting and the weekly report (done by the fourth message)
    expect(memory.tasks.length).toBeGreaterThanOrEqual(2);
    expect(memory.tasks.some((t: any) => t.status === 'done')).toBe(true);
    expect(memory.tasks.some((t: any) => t.status === 'todo' && t.due)).toBe(true);
  });

  it('a user key sees only its own memory: board, records and histories match the API', async () => {
    const { page, errors, close } = await open('desktop', suite.env.keys.user);
    expect(new URL(page.url()).hash).toBe(`#/memory/${SEED_USER}`);
    await expect(page.getByTestId('nav-memory').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('nav-sessions').count()).resolves.toBe(0);
    await expect(page.getByTestId('nav-metrics').count()).resolves.toBe(0);
    await expect(page.getByTestId('who').textContent()).resolves.toBe(`user ${SEED_USER}`);
    // the sessions view is not reachable by address either
    await page.goto(`${suite.env.consoleUrl}#/sessions`);
    await page.waitForSelector('[data-testid="memory"]');
    expect(new URL(page.url()).hash).toBe(`#/memory/${SEED_USER}`);

    expect(Number(await page.getByTestId('memory-version').getAttribute('data-value'))).toBe(memory.memoryVersion);
    // every time on the page is in the user's zone, and the page says which
    expect(memory.timeZone).toEqual(expect.any(String));
    expect(await page.getByTestId('memory-zone').getAttribute('data-value')).toBe(memory.timeZone);
    await expect(page.getByTestId('memory-zone').textContent()).resolves.toContain(memory.timeZone);
    for (const status of STATUSES) {
      const want = memory.tasks.filter((t: any) => t.status === status);
      const column = page.getByTestId(`board-${status}`);
      expect(Number(await column.getAttribute('data-count')), status).toBe(want.length);
      for (const task of want) {
        const card = column.locator(`[data-testid="task"][data-id="${task.id}"]`);
        await expect(card.locator('.task-title').textContent()).resolves.toBe(task.title);
        expect(await card.getAttribute('data-due')).toBe(task.due ?? '');
        if (task.due) await expect(card.textContent()).resolves.toContain(await shown(page, task.due));
        const history = card.getByTestId('history');
        await expect(history.count()).resolves.toBe(task.history.length > 0 ? 1 : 0);
        if (task.history.length) expect(Number(await history.getAttribute('data-count'))).toBe(task.history.length);
      }
    }
    // the done task's history says how its status changed
    const done = memory.tasks.find((t: any) => t.status === 'done');
    const doneCard = page.locator(`[data-testid="task"][data-id="${done.id}"]`);
    await doneCard.locator('summary').click();
    await expect(doneCard.getByTestId('history').textContent()).resolves.toMatch(/status To do → Done/);

    for (const kind of ['projects', 'decisions', 'facts', 'preferences'] as const) {
      const card = page.getByTestId(`records-${kind}`);
      expect(memory[kind].length, `the seed records a ${kind} entry`).toBeGreaterThan(0);
      await expect(card.getByTestId('record').count(), kind).resolves.toBe(memory[kind].length);
      for (const r of memory[kind]) {
        const row = card.locator(`[data-testid="record"][data-id="${r.id}"]`);
        await expect(row.locator('.record-main').textContent()).resolves.toContain(r.name ?? r.text);
        if (r.rationale) await expect(row.textContent()).resolves.toContain(r.rationale);
        expect(Number(await row.getByTestId('history').getAttribute('data-count'))).toBe(r.history.length);
      }
    }
    await screenshot(page, 'memory-desktop-en');
    expect(errors).toEqual([]);
    await close();
  });

  it('the context preview shows layers against quotas, drops and the stable prefix as the API computes them', async () => {
    const { page, errors, close } = await open('desktop', suite.env.keys.user);
    for (const budget of [2000, 120]) {
      await page.getByTestId('context-query').fill(QUESTION);
      await page.getByTestId('context-budget').fill(String(budget));
      await page.getByTestId('context-button').click();
      await page.waitForSelector(`[data-testid="context-result"][data-budget="${budget}"]`);
      const ctx = await suite.env.json('POST', `/v1/users/${SEED_USER}/context`, { query: QUESTION, budget }, suite.env.keys.user);
      const result = page.getByTestId('context-result');
      expect(Number(await result.getAttribute('data-tokens'))).toBe(ctx.tokens);
      await expect(page.getByTestId('context-total').textContent()).resolves.toBe(`${ctx.tokens.toLocaleString('en-US')} / ${budget.toLocaleString('en-US')}`);
      expect(ctx.layers).toHaveLength(6);
      for (const layer of ctx.layers) {
        const row = page.getByTestId(`layer-${layer.name}`);
        expect(Number(await row.getAttribute('data-tokens')), layer.name).toBe(layer.tokens);
        expect(Number(await row.getAttribute('data-budget')), layer.name).toBe(layer.budgetTokens);
      }
      await expect(page.getByTestId('dropped-item').count()).resolves.toBe(ctx.dropped.length);
      const reasons = await page.getByTestId('dropped-item').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-reason')));
      expect(reasons).toEqual(ctx.dropped.map((d: any) => d.reason));
      expect(Number(await page.getByTestId('stable-prefix').getAttribute('data-value'))).toBe(ctx.stablePrefixChars);
      expect(await page.getByTestId('stable-text').textContent()).toBe(ctx.text.slice(0, ctx.stablePrefixChars));
      expect(await page.getByTestId('context-text').textContent()).toBe(ctx.text);
      // one zone in the whole prompt: the clock's, the user's, the board's
      expect(ctx.clock?.timeZone).toBe(memory.timeZone);
      expect(await page.getByTestId('context-zone').getAttribute('data-value')).toBe(memory.timeZone);
      expect(ctx.text).toMatch(new RegExp(`# Now: .*, ${memory.timeZone.replace('/', '\\/')} \\(UTC[+-]\\d\\d:\\d\\d\\); all times here are in this zone`));
      for (const task of memory.tasks.filter((t: any) => t.status === 'todo' && t.due)) {
        const line = ctx.layers.find((l: any) => l.name === 'tasks').items.find((i: any) => i.id === task.id);
        if (line) expect(line.text).toContain(`due ${(await shown(page, task.due)).replace(/\//g, '-')}`);
      }
      if (budget === 120) expect(ctx.dropped.length, 'a small budget drops something').toBeGreaterThan(0);
    }
    await page.getByTestId('context-preview').scrollIntoViewIfNeeded();
    await screenshot(page, 'memory-context-desktop-en');
    expect(errors).toEqual([]);
    await close();
  });

  it('an admin key picks the user; Chinese is chosen from the browser language', async () => {
    const { page, errors, close } = await open('desktop', suite.env.keys.admin, 'zh-CN');
    const users = (await suite.env.json('GET', '/v1/users')).users;
    expect(users.map((u: any) => u.user)).toContain(SEED_USER);
    await expect(page.getByTestId('user-select').inputValue()).resolves.toBe(users[0].user);
    await expect(page.getByTestId('nav-memory').textContent()).resolves.toBe('记忆');
    await expect(page.getByTestId('board-todo').locator('h3').textContent()).resolves.toContain('待办');
    await expect(page.getByTestId('board-done').locator('h3').textContent()).resolves.toContain('已完成');
    await expect(page.getByTestId('context-preview').locator('h2').textContent()).resolves.toBe('上下文预览');
    await screenshot(page, 'memory-desktop-zh');
    expect(errors).toEqual([]);
    await close();
  });

  it('at phone width the board stacks its columns and nothing scrolls sideways', async () => {
    const { page, errors, close } = await open('phone', suite.env.keys.user, 'zh-CN');
    const boxes = await Promise.all(STATUSES.map((s) => page.getByTestId(`board-${s}`).boundingBox()));
    for (let i = 1; i < boxes.length; i++) {
      expect(boxes[i]!.x).toBeCloseTo(boxes[0]!.x, 0);
      expect(boxes[i]!.y).toBeGreaterThan(boxes[i - 1]!.y);
    }
    await page.getByTestId('context-query').fill(QUESTION);
    await page.getByTestId('context-button').click();
    await page.waitForSelector('[data-testid="context-result"]');
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'memory-phone-zh');
    expect(errors).toEqual([]);
    await close();
  });

  it('a rejected key goes back to sign-in with a message; signing in with a good key works', async () => {
    const { context, page } = await newPage(suite.browser, 'desktop');
    await page.goto(`${suite.env.consoleUrl}#key=${encodeURIComponent(suite.env.keys.revoked)}`);
    await page.getByTestId('signin-message').waitFor();
    await expect(page.getByTestId('signin-message').textContent()).resolves.toMatch(/rejected the key/);
    expect(await sessionValues(page)).not.toContain(suite.env.keys.revoked);
    await screenshot(page, 'signin-rejected-desktop-en');
    await page.getByTestId('signin-key').fill(suite.env.keys.user);
    await page.getByTestId('signin-button').click();
    await page.waitForSelector('[data-testid="memory"]');
    // signing out forgets the key
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin').waitFor();
    expect(await sessionValues(page)).toEqual([]);
    await context.close();
  });
});
