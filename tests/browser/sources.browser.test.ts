import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';
import { page as markdownPage } from '../support/source-client.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * The dashboard's Sources page in a real browser (Debian's chromium through playwright-core): a
 * folder source created in the form, synced with "Sync now", its run's counts and failing item,
 * and its documents linking to their pages.
 */
const CHROMIUM = '/usr/bin/chromium';
/** Screenshots (git-ignored), next to the other dashboard pages'. */
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'embedded');
const hasBrowser = existsSync(CHROMIUM);

describe.skipIf(!hasBrowser)('dashboard Sources page in a real browser', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let base: string;
  let folder: string;
  let password: string;

  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'kb-sources-browser-'));
    folder = path.join(base, 'handbook');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'harbour.md'), markdownPage('harbour'));
    await writeFile(path.join(folder, 'lighthouse.md'), markdownPage('lighthouse'));
    await writeFile(
      path.join(folder, 'photo.png'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    );
    svc = await startTestService({ stages: 'all', env: { KB_SOURCE_FOLDER_ROOTS: base } });
    // A password of the owner's own: a generated one is changed first (first-sign-in.browser.test.ts).
    ({ password } = await svc.runtime.services.accounts.create({
      email: 'owner@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: 'owner passphrase for tests',
    }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(30_000);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('creates a folder source, syncs it, and shows its run and documents', async () => {
    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();

    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('heading', { name: 'Sources', exact: true }).waitFor();
    await page.getByText('No source yet').waitFor();

    // A path outside the roots: the service's refusal is shown.
    await page.getByLabel('Name').fill('elsewhere');
    await page.getByLabel('Folder on the server').fill(os.tmpdir());
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('KB_SOURCE_FOLDER_ROOTS');

    await page.getByLabel('Name').fill('handbook');
    await page.getByLabel('Folder on the server').fill(folder);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Source “handbook” created').waitFor();

    const row = page.locator('tr', { hasText: 'handbook' }).first();
    await row.getByRole('button', { name: 'Sync now' }).click();
    await row.getByText('completed').waitFor({ timeout: 60_000 });
    await expect.poll(() => row.textContent()).toContain('created 2');
    expect(await row.textContent()).toContain('failed 1');

    // "Sync now" opened the source's details: its last runs and its documents.
    expect(await row.getByRole('button', { name: 'handbook' }).getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('heading', { name: 'Last runs' }).waitFor();
    await page.getByText('unsupported-type').waitFor();
    const link = page.getByRole('link', { name: 'harbour.md' });
    await link.waitFor();
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, '20-sources.png'), fullPage: true });
    await link.click();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/dashboard\/documents\/[0-9a-f-]{36}$/);

    // Closing and opening the details again.
    await page.goBack();
    const again = page.locator('tr', { hasText: 'handbook' }).first();
    await again.getByRole('button', { name: 'handbook' }).click();
    await page.getByRole('heading', { name: 'Last runs' }).waitFor();
  });
});
