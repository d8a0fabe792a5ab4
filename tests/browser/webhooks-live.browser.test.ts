/**
 * Settings › Webhooks and the live event stream in a real browser (Debian's chromium through
 * playwright-core) against the embedded service: endpoints created against a loopback receiver
 * (the service runs with KB_OUTBOUND_ALLOW_PRIVATE=true), the secret shown once, a test event
 * delivered and listed with its HTTP status, a failed delivery retried, disable, rotate and delete,
 * every row action on screen at 1280 and 390 px; a private target refused by a service without the
 * setting; and the documents list following an ingestion through the event stream, without polling.
 * Skips, saying why, without chromium.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';
import { createEmbeddingProbe, type EmbeddingProbe } from '../support/embedding-probe.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const SHOTS = path.join(REPO_ROOT, 'tests', '.screenshots', 'embedded');
const title = hasBrowser
  ? 'dashboard: webhooks and live updates (browser)'
  : `dashboard: webhooks and live updates (browser) — skipped: ${CHROMIUM} is not installed`;

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

async function signInAs(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Documents' }).waitFor();
}

/** Whether the element's box lies inside the viewport's width, as the page is scrolled now. */
async function inViewport(locator: ReturnType<Page['locator']>, width: number): Promise<boolean> {
  const box = await locator.boundingBox();
  return box !== null && box.x >= 0 && box.x + box.width <= width;
}

describe.skipIf(!hasBrowser)(title, () => {
  let svc: TestService;
  let probe: EmbeddingProbe;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const owner = { email: 'owner@example.com', password: '' };

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    probe = await createEmbeddingProbe();
    receiver = await startWebhookReceiver();
    svc = await startTestService({
      stages: 'all',
      embeddings: probe,
      dispatchWebhooks: true,
      // Retries far away: a failed delivery waits for the Retry button.
      env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_WEBHOOK_RETRY_BASE_MS: '600000' },
    });
    owner.password = (
      await svc.runtime.services.accounts.create({
        email: owner.email,
        workspaceIds: [svc.workspaceId],
        role: 'owner',
        password: 'owner-chosen-password-1',
      })
    ).password;
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signInAs(page, svc.url, owner.email, owner.password);
  }, 300_000);

  afterAll(async () => {
    probe?.release();
    await browser?.close();
    await svc?.close();
    await receiver?.close();
    await probe?.close();
  });

  const openWebhooks = async () => {
    await page.getByRole('link', { name: 'Settings › Webhooks' }).click();
    await page.getByRole('heading', { name: 'Settings › Webhooks' }).waitFor();
  };

  /** Adds an endpoint through the form (all events); returns the secret the page showed once. */
  const addEndpoint = async (url: string, description: string): Promise<string> => {
    await page.getByLabel('URL', { exact: true }).fill(url);
    await page.getByLabel('Description').fill(description);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(SECRET);
    return secret;
  };

  for (const width of [1280, 390]) {
    it(`adds, tests, disables, rotates and deletes an endpoint at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await openWebhooks();
      const hookPath = `/hook-${width}`;
      const secret = await addEndpoint(`${receiver.url}${hookPath}`, `receiver at ${width} px`);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      await page.getByRole('button', { name: 'Done, I stored it' }).click();
      // Shown once: gone from the page, and the service never shows it again.
      expect(await page.getByTestId('webhook-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      const listed = await svc.request('GET', '/api/v1/webhooks');
      expect(listed.text).not.toContain(secret);

      const row = page.locator('tr', { hasText: hookPath });
      await row.getByText('all events').waitFor();
      await row.getByText(`receiver at ${width} px`).waitFor();
      for (const name of ['Deliveries', 'Send test', 'Disable', 'Rotate secret', 'Delete']) {
        const button = row.getByRole('button', { name: new RegExp(`^${name} `) });
        expect(await inViewport(button, width), `${name} at ${width} px`).toBe(true);
      }
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);

      // A test event: signed with the secret shown, listed with its 2xx status.
      await row.getByRole('button', { name: /^Send test / }).click();
      await receiver.waitFor(() => receiver.to(hookPath).length === 1);
      const got = receiver.to(hookPath)[0];
      if (!got) throw new Error('no delivery');
      const verified = new Webhook(secret).verify(got.body, got.headers) as { type: string };
      expect(verified.type).toBe('webhook.test');
      const delivery = page.locator('[data-delivery-id]', { hasText: 'webhook.test' });
      await delivery.getByText('HTTP 200').waitFor();
      await delivery.getByText('delivered').waitFor();
      expect(await delivery.textContent()).toMatch(/\d+ ms/);
      await page.screenshot({ path: path.join(SHOTS, `30-webhooks-${width}.png`), fullPage: true });

      await row.getByRole('button', { name: /^Disable / }).click();
      await row.getByText('Disabled by its owner.').waitFor();
      expect(await row.getByRole('button', { name: /^Send test / }).count()).toBe(0);
      const id = (await row.getAttribute('data-webhook-id')) ?? '';
      expect((await svc.request('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(false);
      await row.getByRole('button', { name: /^Enable / }).click();
      await row.getByRole('button', { name: /^Send test / }).waitFor();
      expect((await svc.request('GET', `/api/v1/webhooks/${id}`)).body.enabled).toBe(true);

      // A new secret, shown once; deliveries are signed with it from now on.
      await row.getByRole('button', { name: /^Rotate secret / }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
      const rotated = (await page.getByTestId('webhook-secret').textContent())?.trim() ?? '';
      expect(rotated).toMatch(SECRET);
      expect(rotated).not.toBe(secret);
      await page.getByRole('button', { name: 'Done, I stored it' }).click();
      await row.getByRole('button', { name: /^Send test / }).click();
      await receiver.waitFor(() => receiver.to(hookPath).length === 2);
      const second = receiver.to(hookPath)[1];
      if (!second) throw new Error('no second delivery');
      expect((new Webhook(rotated).verify(second.body, second.headers) as { type: string }).type).toBe('webhook.test');
      expect(() => new Webhook(secret).verify(second.body, second.headers)).toThrow();

      await row.getByRole('button', { name: /^Delete / }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByText('is removed; its pending deliveries are given up.').waitFor();
      expect(await page.locator('tr', { hasText: hookPath }).count()).toBe(0);
      expect((await svc.request('GET', `/api/v1/webhooks/${id}`)).status).toBe(404);
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  }

  it('lists a failed delivery with its HTTP status and next attempt, and retries it on request', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openWebhooks();
    receiver.answer('/flaky', [{ status: 500 }]);
    await addEndpoint(`${receiver.url}/flaky`, 'answers 500 once');
    await page.getByRole('button', { name: 'Done, I stored it' }).click();
    const row = page.locator('tr', { hasText: '/flaky' });
    await row.getByRole('button', { name: /^Send test / }).click();
    const delivery = page.locator('[data-delivery-id]', { hasText: 'webhook.test' });
    await delivery.getByText('HTTP 500').waitFor();
    expect(await delivery.textContent()).toContain('pending');
    // The next attempt is scheduled (far away here), and Retry is on screen at phone width.
    expect(await delivery.locator('td').nth(5).textContent()).not.toBe('—');
    const retry = delivery.getByRole('button', { name: /^Retry/ });
    expect(await inViewport(retry, 390)).toBe(true);
    await retry.click();
    await delivery.getByText('HTTP 200').waitFor();
    await delivery.getByText('delivered').waitFor();
    expect(await delivery.getByRole('button', { name: /^Retry/ }).count()).toBe(0);
    const received = receiver.to('/flaky');
    expect(received).toHaveLength(2);
    // The same event both times: one webhook-id across the retry.
    expect(received[1]?.headers['webhook-id']).toBe(received[0]?.headers['webhook-id']);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('turns an uploaded document completed in the list from the event stream, without polling or reloading', async () => {
    await page.getByRole('link', { name: 'Documents', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    // What the page asks for the list, and what the event stream brings, in the order they happen.
    const seen: Array<{ kind: 'list' | 'event'; type?: string; data?: string }> = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (request.method() === 'GET' && url.pathname === '/api/v1/documents') seen.push({ kind: 'list' });
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on('Network.eventSourceMessageReceived', (message) =>
      seen.push({ kind: 'event', type: message.eventName, data: message.data }),
    );
    await page.evaluate('window.kbNoReload = true');

    probe.hold();
    const drop = await page.evaluateHandle(
      `(() => { const dt = new DataTransfer(); dt.items.add(new File(['# Lighthouse\\n\\nThe lamp turned all night.\\n'], 'lighthouse-notes.md', { type: 'text/markdown' })); return dt; })()`,
    );
    await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: drop });
    const row = page.locator('tr', { hasText: 'lighthouse-notes.md' });
    await row.waitFor();
    await probe.waitUntilHeld();
    expect(await row.getByText('completed').count()).toBe(0);
    const documentId = (await row.getAttribute('data-document-id')) ?? '';
    expect(documentId).toMatch(/^[0-9a-f-]{36}$/);

    // While the version is held in the embed stage, the page asks nothing (it polled every 1.5 s before).
    const listsBefore = seen.filter((s) => s.kind === 'list').length;
    await new Promise((r) => setTimeout(r, 4_000));
    expect(seen.filter((s) => s.kind === 'list').length).toBe(listsBefore);

    probe.release();
    await row.getByText('completed').waitFor({ timeout: 60_000 });
    const completed = seen.findIndex(
      (s) => s.kind === 'event' && s.type === 'document.version.completed' && s.data?.includes(documentId),
    );
    expect(completed, JSON.stringify(seen)).toBeGreaterThanOrEqual(0);
    // The list was read again because of the event, once (no further requests).
    const after = seen.slice(completed + 1).filter((s) => s.kind === 'list').length;
    const between = seen.slice(0, completed).filter((s) => s.kind === 'list').length;
    expect(between).toBe(listsBefore);
    expect(after).toBe(1);
    expect(await page.evaluate('window.kbNoReload')).toBe(true);
    await cdp.detach();
  });

  it('says when the event stream is refused, and then refreshes the list every 30 s instead', async () => {
    const other = await context.newPage();
    await other.clock.install();
    await other.route('**/api/v1/events?**', (route) =>
      route.fulfill({ status: 503, contentType: 'application/problem+json', body: '{"status":503}' }),
    );
    let lists = 0;
    other.on('request', (request) => {
      if (request.method() === 'GET' && new URL(request.url()).pathname === '/api/v1/documents') lists += 1;
    });
    await other.goto(`${svc.url}/dashboard/documents`);
    await other.getByText('Live updates are unavailable right now').waitFor();
    await other.locator('tr', { hasText: 'lighthouse-notes.md' }).waitFor();
    const before = lists;
    await other.clock.runFor(29_000);
    expect(lists).toBe(before);
    await other.clock.runFor(2_000);
    await expect.poll(() => lists).toBe(before + 1);
    await other.close();
  });
});

describe.skipIf(!hasBrowser)(`${title}: a private target without KB_OUTBOUND_ALLOW_PRIVATE`, () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    svc = await startTestService({ stages: 'none' });
    const { password } = await svc.runtime.services.accounts.create({
      email: 'owner@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: 'owner-chosen-password-1',
    });
    browser = await launch();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(30_000);
    await signInAs(page, svc.url, 'owner@example.com', password);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it("shows the service's refusal in the error banner and adds nothing", async () => {
    await page.getByRole('link', { name: 'Settings › Webhooks' }).click();
    await page.getByText('No webhook endpoint in this workspace yet.').waitFor();
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('loopback, private or link-local');
    expect(await alert.textContent()).toContain('KB_OUTBOUND_ALLOW_PRIVATE');
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    expect((await svc.request('GET', '/api/v1/webhooks')).body.webhooks).toEqual([]);
  });
});
