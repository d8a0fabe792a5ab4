import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIST } from '../../apps/api/lib/dashboard-assets.ts';
import { STAGE_NAMES } from '../../core/events/events.ts';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import { REPO_ROOT } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * The Pipeline page's dead letters in a real browser (Debian's chromium through playwright-core):
 * a document whose stored file went missing fails into the parse stage's dead letters; the owner
 * sees the count and the failure, the file is put back, "Replay" sends it back to its stage once,
 * and the document completes.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'embedded');
const hasBrowser = existsSync(CHROMIUM);

describe.skipIf(!hasBrowser)('dashboard dead letters in a real browser', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let password: string;
  let documentId: string;
  let storageKey: string;
  const bytes = Buffer.from('# Lighthouse\n\nThe keeper logged every passing ship by lamp light.\n');

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    svc = await startTestService({ stages: 'none', env: { KB_EMBEDDING_PROVIDER: 'local' } });
    ({ password } = await svc.runtime.services.accounts.create({
      email: 'owner@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: 'owner passphrase for tests',
    }));
    const up = await svc.upload('lighthouse.md', bytes);
    documentId = (up.body as DocumentView).document_id;
    storageKey = (await svc.runtime.ports.documents.getVersion(documentId, 1))?.storageKey ?? '';
    await svc.runtime.ports.objects.delete(storageKey);
    await svc.runtime.startStages(STAGE_NAMES);
    await svc.waitForStatus(documentId, 'failed');
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

  it('shows the dead letter on the Pipeline page and replays it once its cause is fixed', async () => {
    expect(existsSync(path.join(DASHBOARD_DIST, 'index.html'))).toBe(true);
    await page.goto(`${svc.url}/dashboard/`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();

    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.getByRole('heading', { name: 'Dead letters' }).waitFor();
    const parse = page.locator('table', { hasText: 'Waiting for a replay' }).locator('tr', { hasText: 'parse' });
    await expect.poll(() => parse.locator('td').nth(1).textContent()).toBe('1');
    await page.locator('.dead-letters li', { hasText: documentId }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, '14-pipeline-dead-letters.png'), fullPage: true });

    // The cause is fixed: the file is back.
    await svc.runtime.ports.objects.put(storageKey, bytes);
    await page.getByRole('button', { name: 'Replay 1 dead letter' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Replay' }).click();
    await page.getByText('Replayed 1 dead letter.').waitFor();
    const done = await svc.waitForStatus(documentId, 'completed');
    expect(done.error).toBeNull();
    await expect.poll(() => parse.locator('td').nth(1).textContent()).toBe('0');
    expect(await page.getByRole('button', { name: /^Replay/ }).count()).toBe(0);
  });
});
