/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core against a real
 * service (embedded in `npm test`, distributed on the native engines in the integration suite).
 * Screenshots of each page go to tests/.screenshots/<runtime>/ (git-ignored). Without chromium
 * the suite skips and says why.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIST } from '../../apps/api/lib/dashboard-assets.ts';
import { REPO_ROOT } from '../../support/child-service.ts';

/** A running service the scenario signs in to: its URL and an owner account of a fresh workspace. */
export interface BrowserTarget {
  readonly url: string;
  readonly owner: { readonly email: string; readonly password: string };
  close(): Promise<void>;
}

const CHROMIUM = '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);

const ORIGINAL = [
  '# Harbour log',
  '',
  'The lighthouse keeper recorded amber storms over the northern harbour every winter.',
  '',
  'Fishing boats waited in the sheltered bay until the tide turned and the wind fell.',
].join('\n');
const UPDATED = ORIGINAL.replace('amber storms', 'violet squalls');

export function describeDashboardInBrowser(runtime: string, start: () => Promise<BrowserTarget>): void {
  const title = hasBrowser
    ? `dashboard in a real browser (${runtime})`
    : `dashboard in a real browser (${runtime}) — skipped: ${CHROMIUM} is not installed (apt-get install chromium)`;
  describe.skipIf(!hasBrowser)(title, () => scenario(runtime, start));
}

function scenario(runtime: string, start: () => Promise<BrowserTarget>): void {
  const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', runtime);
  let svc: BrowserTarget;
  let browser: Browser;
  let page: Page;

  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    if (!existsSync(path.join(DASHBOARD_DIST, 'index.html'))) {
      execFileSync('npm', ['run', 'build:dashboard'], { cwd: REPO_ROOT, stdio: 'ignore' });
    }
    await mkdir(SHOTS, { recursive: true });
    svc = await start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  /** The password the owner chooses at the first sign-in, in place of the printed one. */
  const ownPassword = 'the owner chose this passphrase';

  it('signs in from /, creates a key that works, revokes it so that it answers 401', async () => {
    await page.goto(`${svc.url}/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    // By keyboard alone: Tab into the form, type, Enter.
    await page.getByRole('heading', { name: 'Knowledge base' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.name')).toBe('email');
    await page.keyboard.type(svc.owner.email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.name')).toBe('password');
    await page.keyboard.type('wrong password');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong email or password.');
    await shot('01-sign-in');
    await page.getByLabel('Password').fill(svc.owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The owner's password was generated and printed: the dashboard asks for one of the owner's own first.
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('Current password (the generated one)').fill(svc.owner.password);
    await page.getByLabel('New password', { exact: true }).fill(ownPassword);
    await page.getByLabel('New password again').fill(ownPassword);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    await page.getByText('No documents yet').waitFor();

    await page.getByRole('link', { name: 'Settings › API keys' }).click();
    await page.getByRole('heading', { name: 'Settings › API keys' }).waitFor();
    await page.getByLabel('Name').fill('browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^ink_[0-9A-Za-z]{40}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    // Page scripts are strings: the tests compile without the DOM library.
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await shot('02-api-keys-created');

    const withKey = await fetch(`${svc.url}/api/v1/documents`, { headers: { 'X-API-Key': secret } });
    expect(withKey.status).toBe(200);

    await page.getByRole('button', { name: 'Done, I stored it' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    await page.getByRole('button', { name: 'Revoke browser key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('is revoked; requests with it now answer 401').waitFor();
    const revoked = await fetch(`${svc.url}/api/v1/documents`, { headers: { 'X-API-Key': secret } });
    expect(revoked.status).toBe(401);
    await shot('03-api-keys-revoked');
  });

  let documentId = '';
  let beforeUpdate = 0;

  it('uploads a file by drag and drop and shows it completed', async () => {
    await page.getByRole('link', { name: 'Documents' }).click();
    const drop = await page.evaluateHandle(
      `(() => { const dt = new DataTransfer(); dt.items.add(new File([${JSON.stringify(ORIGINAL)}], 'harbour-log.md', { type: 'text/markdown' })); return dt; })()`,
    );
    await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: drop });
    const row = page.locator('tr', { hasText: 'harbour-log.md' });
    await row.getByText('completed').waitFor({ timeout: 120_000 });
    documentId = (await row.getAttribute('data-document-id')) ?? '';
    expect(documentId).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => page.locator('.uploads progress').first().getAttribute('value')).toBe('1');
    await shot('04-documents');
  });

  it('updates the document, shows the changed words in the diff, and rolls back', async () => {
    await page.getByRole('link', { name: 'harbour-log.md' }).click();
    await page.getByRole('heading', { name: /harbour-log\.md/ }).waitFor();
    // The as_of picker has whole seconds: leave a second on each side of the instant kept.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    beforeUpdate = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'harbour-log.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(UPDATED),
    });
    await page.getByLabel('Change reason').fill('colour of the storms corrected');
    await page.getByRole('button', { name: 'Upload version' }).click();
    await page.getByText('Version 2 uploaded').waitFor();
    // The page refreshes by itself until version 2 is ingested.
    const versions = page.locator('table', { has: page.getByRole('columnheader', { name: 'Change reason' }) });
    const second = versions.locator('tbody tr', { hasText: 'colour of the storms corrected' });
    await second.getByText('completed').waitFor({ timeout: 120_000 });
    expect(await second.textContent()).toContain(`you (${svc.owner.email})`);
    await page.locator('h1 .badge', { hasText: 'completed' }).waitFor();
    await page.getByRole('button', { name: 'Compare' }).click();
    const diff = page.getByTestId('diff');
    await diff.waitFor();
    expect(await diff.locator('del').allTextContents()).toEqual(['amber storms']);
    expect(await diff.locator('ins').allTextContents()).toEqual(['violet squalls']);
    await diff.scrollIntoViewIfNeeded();
    await shot('05-document-diff');
    // The history, the compare form and the diff in one 1280×800 picture (the README's).
    const top = await page.evaluate(
      "[...document.querySelectorAll('main h2')].find((h) => h.textContent === 'Versions').getBoundingClientRect().top + scrollY - 16",
    );
    await page.screenshot({
      path: path.join(SHOTS, '05-document-diff-view.png'),
      fullPage: true,
      clip: { x: 0, y: Number(top), width: 1280, height: 800 },
    });

    await page.getByRole('button', { name: 'Roll back to 1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await page.getByText('Rolled back: version 3 has the content of version 1.').waitFor();
    await page.getByRole('button', { name: 'Extracted text' }).click();
    await page.locator('pre.extracted', { hasText: 'amber storms' }).waitFor();
    await shot('06-document-rolled-back');
  });

  it('searches as of an instant before the update and finds the old text', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Query').fill('amber storms');
    await page.getByLabel('Mode').selectOption('keyword');
    const local = await page.evaluate((ms) => {
      const d = new Date(ms);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    }, beforeUpdate);
    await page.getByLabel('As of (local time)').fill(local);
    await page.getByRole('button', { name: 'Search' }).click();
    const result = page.locator('.results li').first();
    await result.waitFor();
    expect(await result.textContent()).toContain('version 1');
    expect(await result.locator('mark').allTextContents()).toEqual(expect.arrayContaining(['amber']));
    await shot('07-search-as-of');

    // A result links to its chunk in the version it came from.
    await result.getByRole('link', { name: 'harbour-log.md' }).click();
    await page.getByRole('heading', { name: 'Version 1' }).waitFor();
    expect(await page.locator('.chunks li.focused').textContent()).toContain('amber storms');
    await page.getByRole('link', { name: 'Search' }).click();

    await page.getByLabel('Query').fill('violet squalls');
    await page.getByLabel('Mode').selectOption('keyword');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Nothing matched').waitFor();
  });

  it('lists every action in the audit log, and shows the pipeline and usage pages', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.locator('table');
    await table.waitFor();
    const actions = await table.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(actions).toEqual(['rollback', 'update', 'create', 'key_revoke', 'key_create']);
    expect(await table.textContent()).toContain('colour of the storms corrected');
    expect(await table.locator('tbody tr').first().textContent()).toContain(`you (${svc.owner.email})`);
    await shot('08-audit');
    await page.getByLabel('Action').selectOption('update');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);

    await page.getByRole('link', { name: 'Pipeline' }).click();
    const stages = page.locator('table').first();
    await stages.waitFor();
    expect(await stages.locator('tbody tr td:first-child').allTextContents()).toEqual([
      'parse',
      'chunk',
      'embed',
      'index',
    ]);
    await page.getByText('No failed documents.').waitFor();
    await shot('09-pipeline');

    await page.getByRole('link', { name: 'Usage' }).click();
    const usage = page.locator('tr', { hasText: 'browser key' });
    await usage.waitFor();
    // The key made one request (before it was revoked); the revoked one answered 401 uncounted.
    expect(await usage.locator('td').nth(1).textContent()).toBe('1');
    await shot('10-usage');
  });

  it("shows a failed ingestion with its error and a reprocess button, and a rejected upload's problem detail", async () => {
    await page.getByRole('link', { name: 'Documents' }).click();
    const encrypted = await readFile(path.join(REPO_ROOT, 'tests', 'fixtures', 'files', 'encrypted.pdf'));
    await page.getByLabel('Files to upload').setInputFiles([
      { name: 'encrypted.pdf', mimeType: 'application/pdf', buffer: encrypted },
      {
        name: 'tool.exe',
        mimeType: 'application/octet-stream',
        buffer: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0]),
      },
    ]);
    const rejected = page.locator('.uploads li', { hasText: 'tool.exe' });
    await rejected.locator('.error-text', { hasText: 'Unsupported file type' }).waitFor();
    const row = page.locator('tr', { hasText: 'encrypted.pdf' });
    await row.getByText('failed').waitFor({ timeout: 120_000 });
    expect(await row.locator('.error-text').textContent()).toMatch(/password/i);
    await row.getByRole('button', { name: 'Reprocess encrypted.pdf' }).waitFor();
    await shot('13-documents-failed');

    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.locator('.failed li', { hasText: 'encrypted.pdf' }).waitFor();
  });

  const newPassword = 'correct horse battery staple';

  it('changes the password on the account page', async () => {
    await page.getByRole('link', { name: 'Settings › Account' }).click();
    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('New password again').fill(newPassword);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('current_password is not the current password');
    await page.getByLabel('Current password').fill(ownPassword);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The password is changed.').waitFor();
    await shot('12-account');
  });

  it('is usable at phone width and signs out', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.locator('tr', { hasText: 'harbour-log.md' }).waitFor();
    await shot('11-documents-phone');
    await page.getByRole('link', { name: 'harbour-log.md' }).click();
    await page.getByRole('heading', { name: 'Versions', exact: true }).waitFor();
    await shot('11-document-phone');
    await page.getByRole('link', { name: 'Settings › API keys' }).click();
    await page.getByRole('heading', { name: 'Settings › API keys' }).waitFor();
    await shot('11-api-keys-phone');
    // Nothing is wider than the phone: wide tables scroll inside their frame.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    const after = await page.evaluate("fetch('/dashboard/api/session').then((r) => r.status)");
    expect(after).toBe(401);
    await page.getByLabel('Email').fill(svc.owner.email);
    await page.getByLabel('Password').fill(newPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  });
}
