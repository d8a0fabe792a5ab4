import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIST } from '../../apps/api/lib/dashboard-assets.ts';
import { REPO_ROOT } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * The Pipeline page's ingestion backlog in a real browser (Debian's chromium through
 * playwright-core): with no stage running, uploads wait; the page shows this workspace's backlog
 * and everyone's against their bounds, and says uploads are refused once the workspace's is full.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'embedded');
const hasBrowser = existsSync(CHROMIUM);
const BOUND = 3;

describe.skipIf(!hasBrowser)('dashboard ingestion backlog in a real browser', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let password: string;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    svc = await startTestService({
      stages: 'none',
      env: { KB_EMBEDDING_PROVIDER: 'local', KB_MAX_BACKLOG_PER_WORKSPACE: String(BOUND), KB_MAX_BACKLOG: '50' },
    });
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
  });

  it('shows the backlog against its bounds, and that uploads wait once it is full', async () => {
    expect(existsSync(path.join(DASHBOARD_DIST, 'index.html'))).toBe(true);
    expect((await svc.upload('first.md', '# First\n\nWaiting for ingestion.\n')).status).toBe(201);
    expect((await svc.upload('elsewhere.md', 'Another workspace.', { key: svc.keys.otherWorkspace })).status).toBe(201);

    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.getByRole('heading', { name: 'Ingestion backlog' }).waitFor();

    const table = page.locator('table', { hasText: 'Versions waiting for ingestion' });
    const cell = (scope: string) => table.locator('tr', { hasText: scope }).locator('td').nth(1);
    await expect.poll(() => cell('This workspace').textContent()).toBe(`1 of at most ${BOUND}`);
    await expect.poll(() => cell('All workspaces').textContent()).toBe('2 of at most 50');
    expect(await page.getByText('The backlog is at its bound').count()).toBe(0);

    for (let i = 2; i <= BOUND; i++) expect((await svc.upload(`doc-${i}.md`, `Document ${i}.`)).status).toBe(201);
    expect((await svc.upload('refused.md', 'One too many.')).status).toBe(429);
    // The counts are read from the store at most once a second.
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh now' }).click();
        return cell('This workspace').textContent();
      })
      .toBe(`${BOUND} of at most ${BOUND}`);
    await page.getByText('The backlog is at its bound').waitFor();
    await page.screenshot({ path: path.join(SHOTS, '15-pipeline-backlog.png'), fullPage: true });
  });
});
