import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../core/model/source-views.model.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { page, syncAndWait } from '../support/source-client.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * What a source's owner could send to stall the service: patterns that make backtracking
 * matchers take exponential time, sitemaps of hundreds of thousands of pages, metadata nested
 * thousands of levels deep or too large. The service stays live (`/health/live` answers within a
 * second all along), caps what a run takes and says so, and refuses bad input with a 422.
 */

/** Pages in each large sitemap. */
const LARGE = 600_000;

let server: Server;
let origin: string;
let svc: TestApp;
const sitemaps = new Map<string, Buffer>();

/** A `<urlset>` of `count` pages `/p/<prefix><i>` and the `extra` pages. */
function urlset(count: number, prefix: string, extra: string[] = []): Buffer {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
  ];
  for (let i = 0; i < count; i += 1) parts.push(`<url><loc>${origin}/p/${prefix}${i}</loc></url>`);
  for (const loc of extra) parts.push(`<url><loc>${loc}</loc></url>`);
  parts.push('</urlset>');
  return Buffer.from(parts.join(''));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const sitemap = sitemaps.get(path);
    if (sitemap) {
      res.writeHead(200, { 'content-type': 'application/xml' }).end(sitemap);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(page(path));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const n of [0, 1, 2]) {
    sitemaps.set(`/large-${n}.xml`, urlset(LARGE, `${n}-`, [`${origin}/keep/${n}-a`, `${origin}/keep/${n}-b`]));
  }
  sitemaps.set(
    '/index.xml',
    Buffer.from(
      `<sitemapindex>${[0, 1, 2].map((n) => `<sitemap><loc>${origin}/large-${n}.xml</loc></sitemap>`).join('')}</sitemapindex>`,
    ),
  );
  // No stage runs, so the sitemap runs' thousands of versions stay queued: the backlog bounds are
  // off, or the later uploads of this file would be refused as backpressure.
  svc = await buildTestApp({
    stages: 'none',
    env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_MAX_BACKLOG_PER_WORKSPACE: '0', KB_MAX_BACKLOG: '0' },
  });
}, 120_000);

afterAll(async () => {
  await svc?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/**
 * Runs a sync of `sourceId` to its end while asking `/health/live` again and again; gives the run
 * and the longest the event loop kept a probe waiting (an iteration's time less its pause).
 */
async function syncWatchingLiveness(sourceId: string): Promise<{ run: RunView; slowestMs: number }> {
  let done = false;
  let slowestMs = 0;
  const watch = (async () => {
    while (!done) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const res = await svc.request('GET', '/health/live');
      expect(res.status).toBe(200);
      slowestMs = Math.max(slowestMs, performance.now() - started - 20);
    }
  })();
  try {
    const run = await syncAndWait(svc, sourceId, { timeoutMs: 240_000 });
    return { run, slowestMs };
  } finally {
    done = true;
    await watch;
  }
}

async function createSource(json: Record<string, unknown>): Promise<string> {
  const res = await svc.request('POST', '/api/v1/sources', { json });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

describe('include and exclude patterns', () => {
  it('match a pattern that backtracking matchers take exponential time on, the service live all along', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `${origin}/d${i}/${'a'.repeat(50)}`);
    const id = await createSource({
      name: 'hostile-pattern',
      kind: 'web',
      urls: [...names, `${origin}/d/${'a'.repeat(50)}b`],
      include: ['**/*a*a*a*a*a*a*a*a*b'],
      exclude: ['**/*a*a*a*a*a*a*a*a*a*a*a*a*c'],
    });
    const { run, slowestMs } = await syncWatchingLiveness(id);
    expect(run.status).toBe('completed');
    expect(run.counts).toMatchObject({ seen: 1, created: 1, failed: 0 });
    expect(slowestMs).toBeLessThan(1000);
  }, 120_000);

  it('refuses patterns it does not support or cannot match quickly, naming each (422), on create and change', async () => {
    const created = expectProblem(
      await svc.request('POST', '/api/v1/sources', {
        json: {
          name: 'bad-patterns',
          kind: 'web',
          urls: [`${origin}/a`],
          include: ['**/*.md', '!(drafts)/**'],
          exclude: ['**/'.repeat(170)],
        },
      }),
      422,
      'validation-error',
    );
    expect(created.errors?.map((e) => e.field)).toEqual(['include/1', 'exclude/0']);
    expect(created.errors?.[0]?.message).toMatch(/negated group/);
    expect(created.errors?.[1]?.message).toMatch(/too complex/);

    const id = await createSource({ name: 'fine-patterns', kind: 'web', urls: [`${origin}/a`], include: ['**'] });
    const patched = expectProblem(
      await svc.request('PATCH', `/api/v1/sources/${id}`, {
        json: { include: Array.from({ length: 100 }, () => '*a'.repeat(255)) },
      }),
      422,
      'validation-error',
    );
    expect(patched.errors?.[0]).toMatchObject({ field: 'include', message: expect.stringMatching(/too complex/) });
    expect((await svc.request('GET', `/api/v1/sources/${id}`)).body.include).toEqual(['**']);
  });
});

describe('large sitemaps', () => {
  it(`takes the first 1,000 pages of a sitemap of ${LARGE} and says it left the others out, the service live all along`, async () => {
    const sitemap = `${origin}/large-0.xml`;
    const id = await createSource({ name: 'large-sitemap', kind: 'web', sitemap });
    const { run, slowestMs } = await syncWatchingLiveness(id);
    expect(run.status).toBe('completed');
    expect(run.counts).toMatchObject({ seen: 1001, created: 1000, failed: 1 });
    expect(run.errors[0]).toMatchObject({ item: sitemap, code: 'source-capped' });
    expect(run.errors[0]?.detail).toMatch(/more than 1000 pages/);
    const listed = await svc.request('GET', '/api/v1/documents?source=large-sitemap&limit=1');
    expect(listed.status).toBe(200);
    expect(slowestMs).toBeLessThan(1000);
  }, 300_000);

  it('deletes nothing when its listing stopped at the cap: what it did not reach is not gone', async () => {
    sitemaps.set('/grows.xml', urlset(0, 'g-', [`${origin}/keep/g-a`, `${origin}/keep/g-b`]));
    const id = await createSource({ name: 'grows', kind: 'web', sitemap: `${origin}/grows.xml` });
    expect((await syncAndWait(svc, id)).counts).toMatchObject({ created: 2, failed: 0 });
    // The two pages now stand past the first 1,000 of the sitemap.
    sitemaps.set('/grows.xml', urlset(1_200, 'g-', [`${origin}/keep/g-a`, `${origin}/keep/g-b`]));
    const run = await syncAndWait(svc, id, { query: '?allow_mass_delete=true', timeoutMs: 240_000 });
    expect(run.counts).toMatchObject({ created: 1000, deleted: 0, deletions_held: 2 });
    expect(run.errors.map((error) => error.code)).toEqual(expect.arrayContaining(['source-capped', 'deletions-held']));
    // Neither of the two earlier documents was deleted: 1,000 new ones beside them.
    const listed = await svc.request('GET', '/api/v1/documents?source=grows&page_size=1');
    expect(listed.body.total).toBe(1002);
  }, 300_000);

  it('reads a sitemap index of three such sitemaps to the end without failing', async () => {
    const id = await createSource({
      name: 'large-index',
      kind: 'web',
      sitemap: `${origin}/index.xml`,
      include: ['**/keep/**'],
    });
    const { run, slowestMs } = await syncWatchingLiveness(id);
    expect(run.status).toBe('completed');
    expect(run.counts).toMatchObject({ seen: 6, created: 6, failed: 0 });
    expect(slowestMs).toBeLessThan(1000);
  }, 300_000);
});

/** `{"a":{"a":…{}}}`, `levels` objects deep, around `inner` (`{}`). */
const nested = (levels: number, inner = '{}'): string =>
  `${'{"a":'.repeat(levels - 1)}${inner}${'}'.repeat(levels - 1)}`;

describe('metadata of a source', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['nested 5,000 levels deep', nested(5000), /nested (more than )?33 levels deep; at most 32/],
    ['nested 1,000 levels deep', nested(1000), /nested (more than )?33 levels deep; at most 32/],
    // A key that looks like a prototype's makes the body be searched for prototype keys, deep or not.
    [
      'nested 5,000 levels deep around a "prototype" key',
      nested(5000, '{"prototype":1}'),
      /nested (more than )?33 levels deep; at most 32/,
    ],
    ['with a key of 5,000 characters', JSON.stringify({ [`k${'x'.repeat(4999)}`]: 1 }), /128/],
    ['of 768 KB', JSON.stringify({ big: 'x'.repeat(768 * 1024) }), /bytes serialised; at most 16384/],
  ];

  it.each(cases)(
    'is refused with 422 naming it when %s, on create and change, as a document’s is',
    async (_, metadata, message) => {
      const body = (json: string) => `{"name":"meta","kind":"web","urls":["${origin}/m"],"metadata":${json}}`;
      const created = expectProblem(
        await svc.request('POST', '/api/v1/sources', {
          body: body(metadata),
          headers: { 'content-type': 'application/json' },
        }),
        422,
        'validation-error',
      );
      expect(created.errors?.[0]?.field).toMatch(/^\/?metadata/);
      expect(created.detail).toMatch(message);
      expect(
        (await svc.request('GET', '/api/v1/sources')).body.sources.map((s: { name: string }) => s.name),
      ).not.toContain('meta');

      const id = await createSource({ name: 'meta-ok', kind: 'web', urls: [`${origin}/m`], metadata: { team: 'ops' } });
      try {
        const patched = expectProblem(
          await svc.request('PATCH', `/api/v1/sources/${id}`, {
            body: `{"metadata":${metadata}}`,
            headers: { 'content-type': 'application/json' },
          }),
          422,
          'validation-error',
        );
        expect(patched.errors?.[0]?.field).toMatch(/^\/?metadata/);
        expect((await svc.request('GET', `/api/v1/sources/${id}`)).body.metadata).toEqual({ team: 'ops' });
      } finally {
        await svc.request('DELETE', `/api/v1/sources/${id}`);
      }

      const doc = await svc.upload('meta.txt', 'some text');
      expect(doc.status).toBe(201);
      const documentPatch = expectProblem(
        await svc.request('PATCH', `/api/v1/documents/${doc.body.document_id}`, {
          body: `{"metadata":${metadata}}`,
          headers: { 'content-type': 'application/json' },
        }),
        422,
        'validation-error',
      );
      expect(documentPatch.errors?.[0]?.field).toMatch(/^\/?metadata/);
    },
  );
});
