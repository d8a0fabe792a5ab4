/**
 * In a real browser (Debian's chromium through playwright-core): the audit log names deleted
 * documents and the source a sync run acted as, without a failed request in the console; at 390 px
 * the documents table's names and the versions table's change reasons stay readable beside the
 * sticky row actions; at 1280 px the Sources page's status pill stays on one line. Skips, saying
 * why, without chromium.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';
import { page as markdownPage, syncAndWait } from '../support/source-client.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const title = hasBrowser
  ? 'dashboard: audit names, narrow tables, source status (browser)'
  : `dashboard: audit names, narrow tables, source status (browser) — skipped: ${CHROMIUM} is not installed`;
/** Screenshots (git-ignored), next to the other dashboard pages'. */
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'embedded');

const LONG_NAME = `${'annual-maintenance-report-of-the-northern-lighthouse-'.repeat(2)}final.md`;
const LONG_REASON =
  'Corrected the tide heights for the spring equinox after the harbour master reported the survey error';

/**
 * The room a table cell gives its text: its content box (inside the padding), cut to the table
 * frame it scrolls in and to the sticky actions column that covers what scrolls beneath it.
 */
async function visibleBox(locator: Locator): Promise<{ left: number; right: number; width: number; height: number }> {
  return locator.evaluate((el) => {
    const outer = el.getBoundingClientRect();
    const style = el.ownerDocument.defaultView?.getComputedStyle(el);
    if (!style) throw new Error('no window');
    const box = {
      left: outer.left + Number.parseFloat(style.paddingLeft),
      right: outer.right - Number.parseFloat(style.paddingRight),
      height: outer.height,
    };
    const frame = el.closest('.table-wrap')?.getBoundingClientRect() ?? box;
    // The sticky actions column covers what scrolls beneath it.
    const actions = el.closest('tr')?.querySelector('td.row-actions')?.getBoundingClientRect();
    const right = Math.min(box.right, frame.right, actions ? actions.left : Number.POSITIVE_INFINITY);
    const left = Math.max(box.left, frame.left);
    return { left, right, width: Math.max(0, right - left), height: box.height };
  });
}

describe.skipIf(!hasBrowser)(title, () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let base: string;
  let longId = '';
  let tideId = '';
  const failures: string[] = [];

  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'kb-audit-browser-'));
    const folder = path.join(base, 'handbook');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'harbour.md'), markdownPage('harbour'));
    svc = await startTestService({ stages: 'all', env: { KB_SOURCE_FOLDER_ROOTS: base } });
    await svc.runtime.services.accounts.create({
      email: 'owner@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: 'owner passphrase for tests',
    });
    const long = await svc.upload(LONG_NAME, '# Report\n\nThe lamp was serviced.\n', { type: 'text/markdown' });
    const tide = await svc.upload('tide-table.md', '# Tides\n\nHigh water at dawn.\n', { type: 'text/markdown' });
    const gone = await svc.upload('retired-handbook.md', '# Retired\n\nNo longer used.\n', { type: 'text/markdown' });
    longId = long.body.document_id;
    tideId = tide.body.document_id;
    for (const id of [longId, tideId, gone.body.document_id]) await svc.waitForStatus(id, 'completed');
    const patched = await svc.request('PATCH', `/api/v1/documents/${tideId}`, {
      json: { metadata: { team: 'harbour' }, change_reason: LONG_REASON },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await svc.request('DELETE', `/api/v1/documents/${gone.body.document_id}`)).status).toBe(204);
    const source = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'handbook', kind: 'folder', path: folder },
    });
    expect(source.status, source.text).toBe(201);
    expect((await syncAndWait(svc, source.body.id)).status).toBe('completed');
    // A source never synced, in a deep folder: its location takes the row's room.
    const deep = path.join(
      base,
      'departments',
      'harbour-operations-and-maintenance',
      'northern-district-lighthouses',
      'keepers-logbooks-and-correspondence',
      'lighthouse-keepers-archive-nineteenth-century',
      // One segment with no break in it, as generated folder names often are.
      'LighthouseKeepersLogbooksAndCorrespondenceOfTheNorthernDistrictFrom1850To1899Scanned',
    );
    await mkdir(deep, { recursive: true });
    const archive = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'keepers-archive', kind: 'folder', path: deep },
    });
    expect(archive.status, archive.text).toBe(201);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(30_000);
    page.on('console', (message) => {
      if (message.type() === 'error') failures.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('owner passphrase for tests');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    await mkdir(SHOTS, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('names a deleted document and the source that synced one, with no failed request', async () => {
    failures.length = 0;
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const deletion = page.locator('tr', { has: page.locator('.tag', { hasText: /^delete$/ }) });
    await expect.poll(() => deletion.locator('td').nth(2).textContent()).toBe('retired-handbook.md (deleted)');
    // A deleted document has no page to link to.
    expect(await deletion.getByRole('link').count()).toBe(0);
    const synced = page.locator('tr', { hasText: 'harbour.md' }).first();
    await expect.poll(() => synced.locator('td').last().textContent()).toBe('source “handbook”');
    await expect.poll(() => page.getByRole('link', { name: 'tide-table.md' }).count()).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SHOTS, '30-audit.png'), fullPage: true });
    expect(failures).toEqual([]);
  });

  it('keeps the documents table’s names readable at 390 px, beside the row actions', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Documents', exact: true }).click();
    const cell = page.locator(`tr[data-document-id="${longId}"] td:first-child`);
    const name = cell.locator('a');
    await name.waitFor();
    await page.screenshot({ path: path.join(SHOTS, '31-documents-390.png'), fullPage: true });
    const box = await visibleBox(cell);
    // About a dozen characters a line: the name wraps in its cell, clear of the actions.
    expect(box.width, JSON.stringify(box)).toBeGreaterThanOrEqual(120);
    expect(box.right).toBeLessThanOrEqual(390);
    expect(await name.textContent()).toBe(LONG_NAME);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  });

  it('keeps the versions table’s change reason readable at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.url}/dashboard/documents/${tideId}`);
    const reason = page.locator('tbody td', { hasText: 'Corrected the tide heights' }).first();
    await reason.waitFor();
    await page.screenshot({ path: path.join(SHOTS, '32-versions-390.png'), fullPage: true });
    const box = await visibleBox(reason);
    expect(box.width, JSON.stringify(box)).toBeGreaterThanOrEqual(120);
    expect(box.right).toBeLessThanOrEqual(390);
    // Shown whole, wrapped, or cut with the whole reason in its title.
    const shown = await reason.evaluate((el) => ({
      text: el.textContent,
      title: el.getAttribute('title') ?? el.querySelector('[title]')?.getAttribute('title') ?? null,
      cut: el.scrollWidth > el.clientWidth + 1,
    }));
    expect(shown.cut ? shown.title : shown.text).toBe(LONG_REASON);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps the Sources page’s status pill on one line at 1280 px', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('link', { name: 'Sources' }).click();
    const row = page.locator('tr', { hasText: 'keepers-archive' }).first();
    await row.waitFor();
    const pill = row.locator('.badge', { hasText: 'never synced' });
    await pill.waitFor();
    await page.screenshot({ path: path.join(SHOTS, '33-sources-1280.png'), fullPage: true });
    const lines = await pill.evaluate((el) => {
      const style = el.ownerDocument.defaultView?.getComputedStyle(el);
      if (!style) throw new Error('no window');
      const lineHeight = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.5;
      const padding = Number.parseFloat(style.paddingTop) + Number.parseFloat(style.paddingBottom);
      return {
        text: el.textContent,
        rects: el.getClientRects().length,
        height: el.getBoundingClientRect().height,
        one: lineHeight + padding,
      };
    });
    expect(lines.rects, JSON.stringify(lines)).toBe(1);
    expect(lines.height, JSON.stringify(lines)).toBeLessThanOrEqual(lines.one + 1);
  });
});
