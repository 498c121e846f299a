/**
 * Browser tests of the web console: Debian's Chromium driven by playwright-core, the console
 * built from console/ when dist/console/ is missing or older than its sources, screenshots saved
 * under test-artifacts/console/. A missing Chromium skips the suite with a printed reason, except
 * with `CI=true`, where it fails (CI installs Chromium: .ci/run).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';

/** Debian's Chromium. */
export const CHROMIUM_PATH = process.env.CTXVM_CHROMIUM ?? '/usr/bin/chromium';

/** Where screenshots go. */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts', 'console');

/** The two layouts every view is checked at. */
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export type ViewportName = keyof typeof VIEWPORTS;

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/**
 * `describe` for a suite that needs Chromium: `body()` declares the tests when it is installed;
 * otherwise one test fails (CI) or is skipped (elsewhere), named after the reason.
 */
export function describeWithChromium(name: string, body: () => void): void {
  describe(name, () => {
    if (existsSync(CHROMIUM_PATH)) return body();
    const reason = `${CHROMIUM_PATH} not found (apt-get install chromium, or set CTXVM_CHROMIUM)`;
    if (process.env.CI === 'true') {
      it('Chromium is installed', () => {
        throw new Error(`Chromium is required when CI=true: ${reason}`);
      });
    } else {
      console.warn(`skipping console browser tests: ${reason}`);
      it.skip(`Chromium unavailable: ${reason}`, () => {});
    }
  });
}

/** Headless Chromium with the flags of a quiet, offline test run. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** A fresh context (own storage) at a viewport; `locale` drives navigator.language. */
export async function newPage(browser: Browser, viewport: ViewportName, options: { locale?: string } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS[viewport], locale: options.locale ?? 'en-US', timezoneId: 'Asia/Shanghai', deviceScaleFactor: 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && !/status of 40[13]/.test(m.text()) && errors.push(`console: ${m.text()}`));
  // the console must never reach beyond its own server
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => {
    errors.push(`external request: ${route.request().url()}`);
    return route.abort();
  });
  return { context, page, errors };
}

/** The values in the page's sessionStorage (where the console keeps the key). */
export function sessionValues(page: Page): Promise<string[]> {
  return page.evaluate<string[]>('Object.values(sessionStorage)');
}

/** Full-page screenshot to test-artifacts/console/<name>.png; `screenshot.path(name)` for element shots. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = screenshot.path(name);
  await page.screenshot({ path, fullPage: true });
  return path;
}
screenshot.path = (name: string): string => {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return join(ARTIFACTS_DIR, `${name}.png`);
};

/** Page width vs viewport (px beyond it): the page itself must never scroll sideways. */
export function horizontalOverflow(page: Page): Promise<number> {
  // a string: this file is type-checked without the DOM library
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(path) : st.mtimeMs);
  }
  return newest;
}

/**
 * dist/console/, built by scripts/build-console.mjs when missing or older than console/ (test files
 * run in parallel: a lock folder lets one build while the others wait).
 */
export async function ensureConsoleBuilt(): Promise<string> {
  const out = join(REPO_ROOT, 'dist', 'console');
  const sources = Math.max(newestMtime(join(REPO_ROOT, 'console')), statSync(join(REPO_ROOT, 'scripts', 'build-console.mjs')).mtimeMs);
  const fresh = () => existsSync(join(out, 'index.html')) && existsSync(join(out, 'app.js')) && statSync(join(out, 'app.js')).mtimeMs >= sources;
  if (fresh()) return out;
  const lock = join(REPO_ROOT, 'dist', '.console-build.lock');
  mkdirSync(join(REPO_ROOT, 'dist'), { recursive: true });
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // a lock older than a minute is left over from a killed run
      const held = statSync(lock, { throwIfNoEntry: false });
      if (waited > 60_000 || (held && Date.now() - held.mtimeMs > 60_000)) rmSync(lock, { recursive: true, force: true });
      await sleep(200);
    }
  }
  try {
    if (!fresh()) execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build-console.mjs')], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return out;
}
