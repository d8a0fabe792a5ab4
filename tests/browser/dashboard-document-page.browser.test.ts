/**
 * Dashboard rough edges in a real browser (Debian's chromium through playwright-core): row actions
 * in reach at 390 and 1280 px with long names, the "being ingested" banner and the chunk panel
 * following a new version, compare selections after a rollback, and metadata edited from the
 * document page. Skips, saying why, without chromium.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const title = hasBrowser
  ? 'dashboard: row actions, document page after writes, metadata edit (browser)'
  : `dashboard: row actions, document page after writes, metadata edit (browser) — skipped: ${CHROMIUM} is not installed`;

const LONG_NAME = `${'quarterly-board-minutes-with-an-unreasonably-long-file-name-'.repeat(3)}final.md`;
const V1 = '# Tide table\n\nHigh water at the harbour mouth comes at dawn in March.\n';
const V2 = '# Tide table\n\nHigh water at the harbour mouth comes at dusk in April.\n';

describe.skipIf(!hasBrowser)(title, () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let owner: { email: string; password: string };
  let tideId = '';
  let longId = '';

  /** Whether the element's box lies inside the viewport (0 … width), as the page is scrolled now. */
  const inViewport = async (locator: ReturnType<Page['locator']>, width: number) => {
    const box = await locator.boundingBox();
    return box !== null && box.x >= 0 && box.x + box.width <= width;
  };

  beforeAll(async () => {
    svc = await startTestService({ stages: 'all' });
    // A password of the owner's own: a generated one is changed first (first-sign-in.browser.test.ts).
    owner = { email: 'owner@example.com', password: 'owner passphrase for tests' };
    await svc.runtime.services.accounts.create({
      email: owner.email,
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: owner.password,
    });
    const long = await svc.upload(LONG_NAME, '# Minutes\n\nThe board met.\n', { type: 'text/markdown' });
    const tide = await svc.upload('tide-table.md', V1, { type: 'text/markdown', metadata: { team: 'harbour' } });
    tideId = tide.body.document_id;
    longId = long.body.document_id;
    await svc.waitForStatus(longId, 'completed');
    await svc.waitForStatus(tideId, 'completed');
    await svc.runtime.services.keys.create({
      workspaceId: svc.workspaceId,
      name: 'importer-for-the-quarterly-board-minutes-archive-and-its-very-long-key-name',
      permissions: ['read'],
      plan: 'starter',
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  for (const width of [1280, 390]) {
    it(`keeps every row action on screen at ${width} px, also beside a long name`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await page.getByRole('link', { name: 'Documents', exact: true }).click();
      const row = page.locator('tr', { hasText: 'unreasonably-long-file-name' });
      await row.waitFor();
      for (const name of ['Delete', 'Purge']) {
        const button = row.getByRole('button', { name: new RegExp(`^${name} quarterly`) });
        expect(await inViewport(button, width), `${name} at ${width} px`).toBe(true);
      }

      await page.getByRole('link', { name: 'Settings › API keys' }).click();
      const key = page.locator('tr', { hasText: 'importer-for-the-quarterly' });
      await key.waitFor();
      expect(await inViewport(key.getByRole('button', { name: /^Revoke/ }), width)).toBe(true);

      await page.goto(`${svc.url}/dashboard/documents/${tideId}`);
      const versionRow = page.locator('tbody tr', { has: page.getByRole('button', { name: /^Show/ }) }).first();
      await versionRow.waitFor();
      expect(await inViewport(versionRow.getByRole('button', { name: /^Show/ }), width)).toBe(true);
      // The page itself never scrolls sideways; tables scroll inside their frame.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  }

  it('replaces the "being ingested" banner once the version is served, and shows that version\'s chunks', async () => {
    await page.goto(`${svc.url}/dashboard/documents/${tideId}`);
    await page.getByRole('heading', { name: 'Version 1' }).waitFor();
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'tide-table.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(V2),
    });
    await page.getByRole('button', { name: 'Upload version' }).click();
    await page.getByText('Version 2 uploaded; it is being ingested.').waitFor();
    await page.getByText('Version 2 is ingested; searches serve it now.').waitFor({ timeout: 120_000 });
    expect(await page.getByText('it is being ingested').count()).toBe(0);
    await page.getByRole('heading', { name: 'Version 2' }).waitFor();
    await page.locator('.chunks li', { hasText: 'dusk in April' }).waitFor();
    expect(await page.locator('.chunks li', { hasText: 'dawn in March' }).count()).toBe(0);
  });

  it('clears a comparison and moves the selections and the chunk panel after a rollback', async () => {
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.getByTestId('diff').waitFor();
    await page.getByRole('button', { name: 'Roll back to 1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await page.getByText('Rolled back: version 3 has the content of version 1.').waitFor();
    await expect.poll(() => page.getByTestId('diff').count()).toBe(0);
    expect(await page.getByLabel('From version').inputValue()).toBe('2');
    expect(await page.getByLabel('To version').inputValue()).toBe('3');
    await page.getByRole('heading', { name: 'Version 3' }).waitFor();
    await page.locator('.chunks li', { hasText: 'dawn in March' }).waitFor();
  });

  it('edits the metadata from the document page (a new version, served at once)', async () => {
    const editor = page.getByLabel('Metadata (JSON object)');
    expect(JSON.parse(await editor.inputValue())).toEqual({ team: 'harbour' });
    await editor.fill('{"team": "harbour", ');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('The metadata is not valid JSON');
    await editor.fill('["not", "an object"]');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('must be a JSON object');

    await editor.fill('{"team": "harbour", "reviewed": true}');
    await page.getByLabel('Why (optional)').fill('reviewed by the harbour master');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await page.getByText('Metadata saved as version 4; searches serve it now.').waitFor();
    const doc = await svc.request('GET', `/api/v1/documents/${tideId}`);
    expect(doc.body).toMatchObject({ version: 4, status: 'completed', metadata: { team: 'harbour', reviewed: true } });
    const versions = await svc.request('GET', `/api/v1/documents/${tideId}/versions`);
    expect(versions.body.versions[0].change_reason).toBe('reviewed by the harbour master');
    await page.locator('tbody tr', { hasText: 'reviewed by the harbour master' }).waitFor();
    await page.getByRole('heading', { name: 'Version 4' }).waitFor();
  });

  it('lists the audit log newest first, with document names and what a delete did', async () => {
    const deleted = await svc.request('DELETE', `/api/v1/documents/${longId}`);
    expect(deleted.status).toBe(204);
    await page.getByRole('link', { name: 'Audit log' }).click();
    const rows = page.locator('table tbody tr');
    await rows.first().waitFor();
    await page.getByText('entries, newest first').waitFor();
    const actions = await rows.locator('td:nth-child(2)').allTextContents();
    expect(actions).toEqual(['delete', 'update', 'rollback', 'update', 'create', 'create']);
    const first = rows.first();
    // A deleted document is named as its last version was, marked deleted, not linked.
    await expect.poll(() => first.locator('td:nth-child(3)').textContent()).toBe(`${LONG_NAME} (deleted)`);
    expect(await first.locator('td:nth-child(3)').getByRole('link').count()).toBe(0);
    expect(await first.locator('td:nth-child(4)').textContent()).toBe('deleted (version 1 was the latest)');
    await expect.poll(() => rows.nth(1).getByRole('link', { name: 'tide-table.md' }).count()).toBe(1);
    expect(await rows.nth(1).locator('td:nth-child(5)').textContent()).toBe('reviewed by the harbour master');
    expect(await rows.nth(2).locator('td:nth-child(4)').textContent()).toBe('version 2 → 3 (rolled back)');
  });
});
