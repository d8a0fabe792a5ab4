/**
 * Webhooks end to end, for either runtime: endpoints over the API, events from the pipeline and
 * the document writes, signed deliveries to a loopback receiver, retries, order, isolation.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_FORMS, literalOrigin, loopbackFormsResolver } from './loopback-forms.ts';
import { parsePrometheusText, sampleValue } from './prometheus-text.ts';
import type { TestServiceOptions } from './test-service.ts';
import { expectProblem, type TestService } from './test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** Opens a service of the runtime under test (each call its own, fresh data); closing it cleans up. */
export type OpenTestService = (options: TestServiceOptions) => Promise<TestService>;

const METRICS_TOKEN = 'webhook-metrics-token';

export function describeWebhookBehaviour(runtime: string, open: OpenTestService): void {
  describe(`webhooks (${runtime} runtime)`, () => {
    let svc: TestService;
    let receiver: WebhookReceiver;

    interface Endpoint {
      id: string;
      secret: string;
      url: string;
      events: string[];
    }

    async function addEndpoint(path: string, events: string[] = ['*'], key?: string): Promise<Endpoint> {
      const res = await svc.request('POST', '/api/v1/webhooks', {
        json: { url: `${receiver.url}${path}`, events, description: path },
        ...(key ? { key } : {}),
      });
      expect(res.status, res.text).toBe(201);
      return res.body as Endpoint;
    }

    async function deliveries(id: string, key?: string) {
      const res = await svc.request('GET', `/api/v1/webhooks/${id}/deliveries`, key ? { key } : {});
      expect(res.status, res.text).toBe(200);
      return res.body.deliveries as Array<{
        id: string;
        event_id: string;
        event_type: string;
        status: string;
        attempts: number;
        attempt_log: Array<{ status_code: number | null; error: string | null }>;
      }>;
    }

    async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await read();
        if (ok(value)) return value;
        if (Date.now() > deadline)
          throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      svc = await open({
        stages: 'all',
        dispatchWebhooks: true,
        env: {
          KB_OUTBOUND_ALLOW_PRIVATE: 'true',
          KB_WEBHOOK_RETRY_BASE_MS: '30',
          KB_WEBHOOK_TIMEOUT_MS: '800',
          KB_METRICS_TOKEN: METRICS_TOKEN,
        },
      });
    });
    afterAll(async () => {
      await svc?.close();
      await receiver?.close();
    });

    describe('webhook endpoints', () => {
      it('creates an endpoint with a whsec_ secret shown once, then never again', async () => {
        const created = await addEndpoint('/once', ['document.version.completed']);
        expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
        const read = await svc.request('GET', `/api/v1/webhooks/${created.id}`);
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({ id: created.id, events: ['document.version.completed'], enabled: true });
        expect(read.body.secret).toBeUndefined();
        const list = await svc.request('GET', '/api/v1/webhooks');
        expect(list.body.webhooks.map((w: Endpoint) => w.id)).toContain(created.id);
        expect(list.text).not.toContain(created.secret);
      });

      it('rejects unknown event types, bad URLs and callers without write permission', async () => {
        const unknown = await svc.request('POST', '/api/v1/webhooks', {
          json: { url: `${receiver.url}/x`, events: ['document.exploded'] },
        });
        expectProblem(unknown, 422, 'validation-error');
        const ftp = await svc.request('POST', '/api/v1/webhooks', {
          json: { url: 'ftp://example.com/x', events: ['*'] },
        });
        expectProblem(ftp, 422, 'validation-error');
        const reader = await svc.request('POST', '/api/v1/webhooks', {
          json: { url: `${receiver.url}/x`, events: ['*'] },
          key: svc.keys.read,
        });
        expectProblem(reader, 403, 'forbidden');
        expectProblem(
          await svc.request('GET', '/api/v1/webhooks/00000000-0000-4000-8000-000000000000'),
          404,
          'not-found',
        );
      });
    });

    describe('deliveries', () => {
      it('delivers a signed document.version.completed once the version is searchable', async () => {
        const endpoint = await addEndpoint('/completed', ['document.version.completed']);
        const up = await svc.upload('glacier.md', '# Glacier\n\nThe glacier calved a berg the size of a stadium.\n', {
          type: 'text/markdown',
        });
        expect(up.status).toBe(201);
        const id = up.body.document_id as string;
        await receiver.waitFor(() => receiver.to('/completed').some((r) => r.json.data.document_id === id));
        // Searchable at once: the event is published after the version is committed.
        const search = await svc.request('POST', '/api/v1/search', {
          json: { query: 'glacier calved berg stadium', mode: 'keyword', limit: 5 },
        });
        expect(search.body.results.map((r: { document_id: string }) => r.document_id)).toContain(id);

        const got = receiver.to('/completed').find((r) => r.json.data.document_id === id);
        if (!got) throw new Error('no delivery');
        // An independent implementation verifies the signature (and rejects a tampered body).
        const verified = new Webhook(endpoint.secret).verify(got.body, got.headers) as { type: string };
        expect(verified.type).toBe('document.version.completed');
        expect(() =>
          new Webhook(endpoint.secret).verify(got.body.replace('glacier', 'glacieR'), got.headers),
        ).toThrow();
        expect(got.headers['webhook-signature']).toMatch(/^v1,/);
        expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
        expect(got.json).toMatchObject({
          type: 'document.version.completed',
          data: {
            workspace_id: svc.workspaceId,
            document_id: id,
            version: 1,
            status: 'completed',
            name: 'glacier.md',
            source: expect.any(String),
          },
        });
        expect(Number.isNaN(Date.parse(got.json.timestamp))).toBe(false);
        const listed = await deliveries(endpoint.id);
        expect(listed[0]).toMatchObject({ status: 'delivered', attempts: 1, event_id: got.headers['webhook-id'] });
      });

      it('retries after 500 answers with the same webhook-id, and shows each attempt', async () => {
        const endpoint = await addEndpoint('/flaky', ['document.deleted']);
        receiver.answer('/flaky', [{ status: 500 }, { status: 503 }]);
        const up = await svc.upload('flaky.md', 'A note that will be deleted soon.', {});
        const id = up.body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
        await receiver.waitFor(() => receiver.to('/flaky').length >= 3);
        const attempts = receiver.to('/flaky');
        expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
        expect(attempts[0]?.json).toMatchObject({
          type: 'document.deleted',
          data: { document_id: id, status: 'deleted', actor: { type: 'api_key', id: expect.any(String) } },
        });
        const [delivery] = await until(
          () => deliveries(endpoint.id),
          (list) => list[0]?.status === 'delivered',
        );
        expect(delivery?.attempts).toBe(3);
        expect(delivery?.attempt_log.map((a) => a.status_code)).toEqual([500, 503, 200]);
      });

      it('retries after a timeout', async () => {
        const endpoint = await addEndpoint('/slow', ['document.purged']);
        receiver.answer('/slow', [{ status: 200, delayMs: 2_000 }]);
        const up = await svc.upload('slow.md', 'A note that will be purged.', {});
        const id = up.body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`)).status).toBe(204);
        const [delivery] = await until(
          () => deliveries(endpoint.id),
          (list) => list[0]?.status === 'delivered',
        );
        expect(delivery?.attempts).toBe(2);
        expect(delivery?.attempt_log[0]?.status_code).toBeNull();
        expect(delivery?.attempt_log[0]?.error).toMatch(/timeout/);
        const got = receiver.to('/slow');
        expect(got.map((r) => r.headers['webhook-id'])).toEqual([delivery?.event_id, delivery?.event_id]);
        expect(got[0]?.json.data).toMatchObject({ document_id: id, status: 'purged' });
      });

      it("delivers one document's events in order, even while its first delivery is retried", async () => {
        await addEndpoint('/ordered', ['*']);
        receiver.answer('/ordered', [{ status: 500 }, { status: 500 }]);
        const up = await svc.upload('order.md', 'Version one of the ordered note.', {});
        const id = up.body.document_id as string;
        await svc.waitForStatus(id, 'completed');
        const put = await svc.upload('order.md', 'Version two of the ordered note, rewritten.', { documentId: id });
        expect(put.status).toBe(200);
        await svc.waitForStatus(id, 'completed');
        expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
        await receiver.waitFor(() => receiver.to('/ordered').some((r) => r.json.type === 'document.deleted'));
        const successful: string[] = [];
        const seen = new Set<string>();
        for (const r of receiver.to('/ordered')) {
          if (r.json.data.document_id !== id || seen.has(r.headers['webhook-id'] as string)) continue;
          seen.add(r.headers['webhook-id'] as string);
          successful.push(`${r.json.type}:${r.json.data.version}`);
        }
        expect(successful).toEqual([
          'document.version.completed:1',
          'document.version.completed:2',
          'document.deleted:2',
        ]);
      });

      it('sends a webhook.test event on request', async () => {
        const endpoint = await addEndpoint('/test-event', ['document.purged']);
        const res = await svc.request('POST', `/api/v1/webhooks/${endpoint.id}/test`);
        expect(res.status).toBe(202);
        await receiver.waitFor(() => receiver.to('/test-event').length === 1);
        const got = receiver.to('/test-event')[0];
        expect(got?.json.type).toBe('webhook.test');
        expect(got?.headers['webhook-id']).toBe(res.body.event_id);
        expect(() => new Webhook(endpoint.secret).verify(got?.body ?? '', got?.headers ?? {})).not.toThrow();
      });

      it('signs with a rotated secret from then on', async () => {
        const endpoint = await addEndpoint('/rotated', ['document.purged']);
        const rotated = await svc.request('PATCH', `/api/v1/webhooks/${endpoint.id}`, {
          json: { rotate_secret: true },
        });
        expect(rotated.status).toBe(200);
        expect(rotated.body.secret).toMatch(/^whsec_/);
        expect(rotated.body.secret).not.toBe(endpoint.secret);
        await svc.request('POST', `/api/v1/webhooks/${endpoint.id}/test`);
        await receiver.waitFor(() => receiver.to('/rotated').length === 1);
        const got = receiver.to('/rotated')[0];
        expect(() => new Webhook(rotated.body.secret).verify(got?.body ?? '', got?.headers ?? {})).not.toThrow();
        expect(() => new Webhook(endpoint.secret).verify(got?.body ?? '', got?.headers ?? {})).toThrow();
      });

      it('sends nothing to a disabled endpoint, and retries a delivery on request', async () => {
        const disabled = await addEndpoint('/disabled', ['document.deleted']);
        const witness = await addEndpoint('/witness', ['document.deleted']);
        const off = await svc.request('PATCH', `/api/v1/webhooks/${disabled.id}`, { json: { enabled: false } });
        expect(off.body).toMatchObject({ enabled: false, disabled_reason: 'Disabled by its owner.' });
        const up = await svc.upload('quiet.md', 'Nobody hears of this deletion.', {});
        const id = up.body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
        await receiver.waitFor(() => receiver.to('/witness').some((r) => r.json.data.document_id === id));
        expect(receiver.to('/disabled')).toEqual([]);
        expect(await deliveries(disabled.id)).toEqual([]);
        expectProblem(await svc.request('POST', `/api/v1/webhooks/${disabled.id}/test`), 409, 'conflict');

        const [done] = await deliveries(witness.id);
        const retried = await svc.request('POST', `/api/v1/webhooks/${witness.id}/deliveries/${done?.id}/retry`);
        expect(retried.status).toBe(202);
        await receiver.waitFor(
          () => receiver.to('/witness').filter((r) => r.json.data.document_id === id).length === 2,
        );
        expectProblem(
          await svc.request('POST', `/api/v1/webhooks/${disabled.id}/deliveries/${done?.id}/retry`),
          404,
          'not-found',
        );
      });

      it("never sends one workspace's events to another's endpoint", async () => {
        const other = await addEndpoint('/other-workspace', ['*'], svc.keys.otherWorkspace);
        const mine = await addEndpoint('/my-workspace', ['document.deleted']);
        const up = await svc.upload('private.md', 'Only my workspace may hear of this.', {});
        const id = up.body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
        await receiver.waitFor(() => receiver.to('/my-workspace').some((r) => r.json.data.document_id === id));
        await new Promise((r) => setTimeout(r, 300));
        expect(receiver.to('/other-workspace')).toEqual([]);
        expect(await deliveries(other.id, svc.keys.otherWorkspace)).toEqual([]);
        // Nor can another workspace see or touch the endpoint.
        expectProblem(
          await svc.request('GET', `/api/v1/webhooks/${mine.id}`, { key: svc.keys.otherWorkspace }),
          404,
          'not-found',
        );
        expectProblem(
          await svc.request('DELETE', `/api/v1/webhooks/${mine.id}`, { key: svc.keys.otherWorkspace }),
          404,
          'not-found',
        );
        const theirs = await svc.request('GET', '/api/v1/webhooks', { key: svc.keys.otherWorkspace });
        expect(theirs.body.webhooks.map((w: Endpoint) => w.id)).toEqual([other.id]);
      });

      it('disables an endpoint that keeps failing, saying why', async () => {
        const failing = await addEndpoint('/always-500', ['document.purged']);
        receiver.answer(
          '/always-500',
          Array.from({ length: 50 }, () => ({ status: 500 })),
        );
        // Backdate the failure clock (5 days is the default bound) by the store, as time would.
        const store = svc.runtime.ports.webhooks;
        await svc.request('POST', `/api/v1/webhooks/${failing.id}/test`);
        await receiver.waitFor(() => receiver.to('/always-500').length >= 1);
        const current = await until(
          () => store.getEndpoint(svc.workspaceId, failing.id),
          (e) => e?.failingSinceMs !== null,
        );
        if (!current) throw new Error('endpoint missing');
        await store.updateEndpoint({ ...current, failingSinceMs: Date.now() - 6 * 24 * 3600 * 1000 });
        // The next failed attempt disables it: due now rather than at its (growing) retry time (a
        // retry already under way may get there first).
        const [delivery] = await deliveries(failing.id);
        expect(
          (await svc.request('POST', `/api/v1/webhooks/${failing.id}/deliveries/${delivery?.id}/retry`)).status,
        ).toBe(202);
        const read = await until(
          () => svc.request('GET', `/api/v1/webhooks/${failing.id}`),
          (r) => r.body.enabled === false,
        );
        expect(read.body.disabled_reason).toMatch(/failed since .*answered 500/);
        // Its pending delivery is given up without being sent (made due now, in case the attempt that
        // disabled the endpoint scheduled another).
        const seen = receiver.to('/always-500').length;
        await svc.request('POST', `/api/v1/webhooks/${failing.id}/deliveries/${delivery?.id}/retry`);
        const [given] = await until(
          () => deliveries(failing.id),
          (list) => list[0]?.status === 'failed',
        );
        expect(given?.attempt_log.at(-1)?.error).toMatch(/disabled/);
        expect(receiver.to('/always-500')).toHaveLength(seen);
      });

      it('reports deliveries by outcome, their lag and the oldest pending delivery in /metrics', async () => {
        const pending = await addEndpoint('/metrics-pending', ['document.purged']);
        receiver.answer(
          '/metrics-pending',
          Array.from({ length: 20 }, () => ({ status: 500 })),
        );
        await svc.request('POST', `/api/v1/webhooks/${pending.id}/test`);
        await receiver.waitFor(() => receiver.to('/metrics-pending').length >= 1);
        await new Promise((r) => setTimeout(r, 200));
        const res = await svc.request('GET', '/metrics', {
          key: null,
          headers: { authorization: `Bearer ${METRICS_TOKEN}` },
        });
        expect(res.status).toBe(200);
        const samples = parsePrometheusText(res.text);
        expect(sampleValue(samples, 'kb_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThan(0);
        expect(sampleValue(samples, 'kb_webhook_deliveries_total', { outcome: 'retrying' })).toBeGreaterThan(0);
        expect(sampleValue(samples, 'kb_webhook_delivery_lag_seconds_count')).toBeGreaterThan(0);
        expect(sampleValue(samples, 'kb_webhook_pending_deliveries')).toBeGreaterThanOrEqual(1);
        expect(sampleValue(samples, 'kb_webhook_oldest_pending_seconds')).toBeGreaterThan(0);
      });

      it('deletes an endpoint', async () => {
        const endpoint = await addEndpoint('/gone', ['*']);
        expect((await svc.request('DELETE', `/api/v1/webhooks/${endpoint.id}`)).status).toBe(204);
        expectProblem(await svc.request('GET', `/api/v1/webhooks/${endpoint.id}`), 404, 'not-found');
      });
    });

    describe('private targets', () => {
      it('refuses a loopback target with 422 without KB_OUTBOUND_ALLOW_PRIVATE, and again at delivery', async () => {
        const strict = await open({ stages: 'none' });
        try {
          const res = await strict.request('POST', '/api/v1/webhooks', {
            json: { url: `${receiver.url}/private`, events: ['*'] },
          });
          const problem = expectProblem(res, 422, 'validation-error');
          expect(problem.errors?.[0]?.field).toBe('url');
          expect((await strict.request('GET', '/api/v1/webhooks')).body.webhooks).toEqual([]);
        } finally {
          await strict.close();
        }
      });

      it('refuses every IPv6 form of loopback, as a URL literal and as what a name resolves to (422)', async () => {
        const strict = await open({ stages: 'none', resolveHost: loopbackFormsResolver() });
        try {
          const port = new URL(receiver.url).port;
          for (const form of LOOPBACK_FORMS) {
            for (const url of [`${literalOrigin(form, port)}/form`, `http://${form.name}:${port}/form`]) {
              const res = await strict.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'] } });
              const problem = expectProblem(res, 422, 'validation-error');
              expect(problem.errors?.[0], url).toMatchObject({ field: 'url' });
              expect(problem.errors?.[0]?.message).toMatch(/is not a public address/);
            }
          }
          expect((await strict.request('GET', '/api/v1/webhooks')).body.webhooks).toEqual([]);
        } finally {
          await strict.close();
        }
      });

      it('does not deliver to a stored endpoint whose name now resolves to an IPv6 form of loopback', async () => {
        const names = new Map([['hooks.example.test', '::ffff:127.0.0.1']]);
        const strict = await open({
          stages: 'none',
          dispatchWebhooks: true,
          resolveHost: loopbackFormsResolver(names),
        });
        try {
          const id = '6f1b7a2e-0000-4000-8000-000000000002';
          const port = new URL(receiver.url).port;
          await strict.runtime.ports.webhooks.createEndpoint({
            id,
            workspaceId: strict.workspaceId,
            url: `http://hooks.example.test:${port}/form-later`,
            events: ['*'],
            description: null,
            secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
            enabled: true,
            disabledReason: null,
            failingSinceMs: null,
            createdAtMs: Date.now(),
            updatedAtMs: Date.now(),
          });
          expect((await strict.request('POST', `/api/v1/webhooks/${id}/test`)).status).toBe(202);
          const list = await until(
            () => strict.request('GET', `/api/v1/webhooks/${id}/deliveries`),
            (r) => (r.body.deliveries?.[0]?.attempts ?? 0) >= 1,
          );
          expect(list.body.deliveries[0].attempt_log[0].error).toMatch(
            /^outbound-refused.*IPv4-mapped form of 127\.0\.0\.1/,
          );
          expect(receiver.to('/form-later')).toEqual([]);
        } finally {
          await strict.close();
        }
      });

      it('does not deliver to a stored endpoint whose target is private when the setting is off', async () => {
        const strict = await open({ stages: 'none', dispatchWebhooks: true });
        try {
          // An endpoint accepted earlier (say, while the setting was on), or whose name now resolves privately.
          await strict.runtime.ports.webhooks.createEndpoint({
            id: '6f1b7a2e-0000-4000-8000-000000000001',
            workspaceId: strict.workspaceId,
            url: `${receiver.url}/private-later`,
            events: ['*'],
            description: null,
            secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
            enabled: true,
            disabledReason: null,
            failingSinceMs: null,
            createdAtMs: Date.now(),
            updatedAtMs: Date.now(),
          });
          const test = await strict.request('POST', '/api/v1/webhooks/6f1b7a2e-0000-4000-8000-000000000001/test');
          expect(test.status).toBe(202);
          const list = await until(
            () => strict.request('GET', '/api/v1/webhooks/6f1b7a2e-0000-4000-8000-000000000001/deliveries'),
            (r) => (r.body.deliveries?.[0]?.attempts ?? 0) >= 1,
          );
          expect(list.body.deliveries[0].attempt_log[0].error).toMatch(/^outbound-refused/);
          expect(receiver.to('/private-later')).toEqual([]);
          // Nor can the endpoint be pointed at another private target.
          const moved = await strict.request('PATCH', '/api/v1/webhooks/6f1b7a2e-0000-4000-8000-000000000001', {
            json: { url: `${receiver.url}/elsewhere` },
          });
          expect(expectProblem(moved, 422, 'validation-error').errors?.[0]?.field).toBe('url');
        } finally {
          await strict.close();
        }
      });
    });
  });
}
