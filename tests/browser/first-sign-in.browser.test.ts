/**
 * In a real browser (Debian's chromium through playwright-core), at 1280 and 390 px: the first
 * sign-in with a generated password shows only the "Choose a new password" form, after which the
 * documents page works and the next sign-in goes straight in; the search page shows each score
 * relative to the best result with what the raw score means in the mode used. Skips, saying why,
 * without chromium.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots of the pages (git-ignored). */
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'first-sign-in');
const hasBrowser = existsSync(CHROMIUM);
const title = hasBrowser
  ? 'dashboard: first sign-in with a generated password, relative search scores (browser)'
  : `dashboard: first sign-in with a generated password, relative search scores (browser) — skipped: ${CHROMIUM} is not installed`;

/** Three notes whose keyword scores for "harbour tide" differ. */
const NOTES: Record<string, string> = {
  'harbour-tides.md': '# Harbour tides\n\nThe harbour tide table: harbour tide at dawn, harbour tide at dusk.\n',
  'harbour-walk.md':
    '# A walk\n\nWe walked along the old harbour wall, past the fish market, the chapel, the ropewalk and the inn, then home across the fields.\n',
  'tide-mill.md': '# The mill\n\nThe tide mill ground corn while the tide ran out of the pond.\n',
};

describe.skipIf(!hasBrowser)(title, () => {
  let svc: TestService;
  let browser: Browser;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    svc = await startTestService({ stages: 'all' });
    for (const [name, text] of Object.entries(NOTES)) {
      const uploaded = await svc.upload(name, text, { type: 'text/markdown' });
      await svc.waitForStatus(uploaded.body.document_id, 'completed');
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  const openPage = async (width: number): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: { width, height: 844 } })).newPage();
    page.setDefaultTimeout(30_000);
    return page;
  };

  const signIn = async (page: Page, email: string, password: string) => {
    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  /** Status and `error.code` of a dashboard request made by the page itself, with its session. */
  const documentsFromPage = (page: Page) =>
    page.evaluate(
      "fetch('/api/v1/documents').then(async (r) => ({ status: r.status, code: (await r.json()).error?.code ?? null }))",
    ) as Promise<{ status: number; code: string | null }>;

  for (const width of [1280, 390]) {
    it(`asks for a new password at the first sign-in, then works, and signs in straight after (${width} px)`, async () => {
      const email = `printed-${width}@example.com`;
      const { password } = await svc.runtime.services.accounts.create({
        email,
        workspaceIds: [svc.workspaceId],
        role: 'owner',
      });
      const page = await openPage(width);
      try {
        await signIn(page, email, password);
        await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
        await page.getByText(email).waitFor();
        // Nothing else of the dashboard is there, and its requests are refused until the change.
        expect(await page.getByRole('link', { name: 'Documents' }).count()).toBe(0);
        expect(await documentsFromPage(page)).toEqual({ status: 403, code: 'password_change_required' });
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        await page.screenshot({ path: path.join(SHOTS, `choose-password-${width}.png`), fullPage: true });
        // A reload keeps asking.
        await page.reload();
        await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();

        const mine = `my own passphrase at ${width}`;
        await page.getByLabel('Current password (the generated one)').fill('not the printed password');
        await page.getByLabel('New password', { exact: true }).fill(mine);
        await page.getByLabel('New password again').fill(mine);
        await page.getByRole('button', { name: 'Set the new password' }).click();
        await expect
          .poll(() => page.getByRole('alert').textContent())
          .toContain('current_password is not the current password');
        await page.getByLabel('Current password (the generated one)').fill(password);
        await page.getByRole('button', { name: 'Set the new password' }).click();

        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        await page.locator('tr', { hasText: 'harbour-tides.md' }).waitFor();
        expect(await documentsFromPage(page)).toEqual({ status: 200, code: null });

        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByText('You are signed out.').waitFor();
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(mine);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        expect(await page.getByRole('heading', { name: 'Choose a new password' }).count()).toBe(0);
      } finally {
        await page.context().close();
      }
    });
  }

  for (const width of [1280, 390]) {
    it(`shows each search score relative to the best, the raw score, and what it means per mode (${width} px)`, async () => {
      const email = `searcher-${width}@example.com`;
      const password = `searcher passphrase ${width}`;
      await svc.runtime.services.accounts.create({ email, workspaceIds: [svc.workspaceId], role: 'member', password });
      const page = await openPage(width);
      try {
        await signIn(page, email, password);
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        await page.getByRole('link', { name: 'Search' }).click();

        /** Searches in `mode` and waits for the legend of that mode. */
        const search = async (mode: 'keyword' | 'semantic' | 'hybrid') => {
          await page.getByLabel('Query').fill('harbour tide');
          await page.getByLabel('Mode').selectOption(mode);
          await page.getByRole('button', { name: 'Search' }).click();
          const says = { keyword: 'BM25', semantic: 'cosine similarity', hybrid: 'fuse both rankings' }[mode];
          await page.locator('.score-legend', { hasText: says }).waitFor();
        };

        await search('keyword');
        const legend = (await page.locator('.score-legend').textContent()) ?? '';
        expect(legend).toContain("share of the best result's (100 %)");
        expect(legend).toContain('BM25');
        expect(legend).toContain('cannot be compared across queries');
        // The raw scores the API gives, for the same search.
        const raw = (await svc.request('POST', '/api/v1/search', { json: { query: 'harbour tide', mode: 'keyword' } }))
          .body.results as Array<{ score: number }>;
        expect(raw.length).toBe(3);
        const best = Math.max(...raw.map((r) => r.score));
        const scores = page.getByTestId('score');
        await expect.poll(() => scores.count()).toBe(3);
        const percents = (await page.locator('.score-percent').allTextContents()).map((t) => t.trim());
        expect(percents).toEqual(raw.map((r) => `${Math.round((r.score / best) * 100)} %`));
        expect(percents).toContain('100 %');
        expect(percents.some((p) => p !== '100 %')).toBe(true);
        expect(await page.locator('.score-raw').allTextContents()).toEqual(
          raw.map((r) => `BM25 ${r.score.toFixed(3)}`),
        );
        expect(await scores.first().getAttribute('title')).toMatch(/% of the best result's score \(raw BM25 .*BM25/);
        expect(await page.locator('.score meter').first().getAttribute('value')).toBe(
          String(Math.round(((raw[0]?.score ?? 0) / best) * 100)),
        );
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        await page.screenshot({ path: path.join(SHOTS, `search-scores-${width}.png`), fullPage: true });

        await search('semantic');
        expect((await page.locator('.score-raw').first().textContent())?.startsWith('cosine ')).toBe(true);
        await search('hybrid');
        expect((await page.locator('.score-raw').first().textContent())?.startsWith('fused ')).toBe(true);
        expect(await page.locator('.score-percent').allTextContents()).toContain('100 %');
      } finally {
        await page.context().close();
      }
    });
  }
});
