import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentListItemView } from '../../core/model/response-views.model.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { LOOPBACK_FORMS, literalOrigin, loopbackFormsResolver } from '../support/loopback-forms.ts';
import { page, syncAndWait } from '../support/source-client.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * Web sources against a loopback HTTP server (allowed with KB_OUTBOUND_ALLOW_PRIVATE=true): a URL
 * list and a sitemap index, HTTP validators (304 costs nothing), a changed page as a new version,
 * failing pages, and the refusal of private targets without the operator's permission.
 */
interface Resource {
  body: string;
  etag?: string;
  lastModified?: string;
  type?: string;
}

let server: Server;
let origin: string;
let svc: TestApp;
let guarded: TestApp;
const resources = new Map<string, Resource>();
const hits: Array<{ path: string; status: number }> = [];
/** Names the guarded service resolves, besides those of the loopback forms (a test may change them). */
const names = new Map<string, string>();

function serve(path: string, resource: Resource): void {
  resources.set(path, resource);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (path === '/moved') {
      res.writeHead(302, { location: '/docs/alpha.md' }).end();
      hits.push({ path, status: 302 });
      return;
    }
    const resource = resources.get(path);
    if (!resource) {
      res.writeHead(404).end('not here');
      hits.push({ path, status: 404 });
      return;
    }
    const fresh =
      (resource.etag !== undefined && req.headers['if-none-match'] === resource.etag) ||
      (resource.lastModified !== undefined && req.headers['if-modified-since'] === resource.lastModified);
    const headers: Record<string, string> = { 'content-type': resource.type ?? 'text/plain; charset=utf-8' };
    if (resource.etag) headers.etag = resource.etag;
    if (resource.lastModified) headers['last-modified'] = resource.lastModified;
    if (fresh) {
      res.writeHead(304, headers).end();
      hits.push({ path, status: 304 });
      return;
    }
    res.writeHead(200, headers).end(resource.body);
    hits.push({ path, status: 200 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  serve('/docs/alpha.md', { body: page('alpha'), etag: '"alpha-1"', type: 'text/markdown' });
  serve('/docs/beta.txt', { body: page('beta'), lastModified: 'Wed, 21 Oct 2026 07:28:00 GMT' });
  serve('/docs/gamma', {
    body: '<html><body><p>The gamma page talks about tamarind.</p></body></html>',
    type: 'text/html',
  });
  serve('/docs/big.txt', { body: 'x'.repeat(5000) });
  serve('/sitemap.xml', {
    body: `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/docs/alpha.md</loc></url><url><loc>${origin}/docs/beta.txt</loc></url><url><loc>${origin}/drafts/wip.md</loc></url></urlset>`,
    type: 'application/xml',
  });
  serve('/index.xml', {
    body: `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap.xml</loc></sitemap></sitemapindex>`,
    type: 'application/xml',
  });

  svc = await buildTestApp({ stages: 'all', env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_MAX_UPLOAD_BYTES: '2000' } });
  guarded = await buildTestApp({ stages: 'none', resolveHost: loopbackFormsResolver(names) });
});
afterAll(async () => {
  await svc?.close();
  await guarded?.close();
  await new Promise((resolve) => server?.close(resolve));
});

async function documents(name: string): Promise<DocumentListItemView[]> {
  return (await svc.request('GET', `/api/v1/documents?source=${name}&limit=100`)).body.documents;
}

describe('web source with a URL list', () => {
  let id: string;

  it('fetches each page once, keeps its validators, and lists the failing ones', async () => {
    const res = await svc.request('POST', '/api/v1/sources', {
      json: {
        name: 'site',
        kind: 'web',
        urls: [
          `${origin}/docs/alpha.md`,
          `${origin}/docs/beta.txt`,
          `${origin}/docs/gamma`,
          `${origin}/docs/big.txt`,
          `${origin}/docs/none.md`,
          `${origin}/moved`,
        ],
      },
    });
    expect(res.status).toBe(201);
    id = res.body.id;
    const run = await syncAndWait(svc, id);
    expect(run.counts).toMatchObject({ seen: 6, created: 4, failed: 2 });
    expect(run.errors.map((e) => [e.item, e.code]).sort()).toEqual([
      [`${origin}/docs/big.txt`, 'outbound-too-large'],
      [`${origin}/docs/none.md`, 'source-unreachable'],
    ]);
    const docs = await documents('site');
    expect(docs.map((d) => d.source_item).sort()).toEqual(
      [`${origin}/docs/alpha.md`, `${origin}/docs/beta.txt`, `${origin}/docs/gamma`, `${origin}/moved`].sort(),
    );
    expect(docs.find((d) => d.source_item === `${origin}/docs/alpha.md`)).toMatchObject({
      name: 'alpha.md',
      mime_type: 'text/markdown',
    });
    for (const doc of docs) await svc.waitForStatus(doc.document_id, 'completed');
  });

  it('asks again with If-None-Match / If-Modified-Since: a 304 is unchanged, without a version', async () => {
    hits.length = 0;
    const run = await syncAndWait(svc, id);
    expect(run.counts).toMatchObject({ unchanged: 4, created: 0, updated: 0 });
    // alpha.md is asked for twice: as itself and as where /moved leads.
    expect(hits.filter((h) => h.path === '/docs/alpha.md').map((h) => h.status)).toEqual([304, 304]);
    expect(hits.filter((h) => h.path === '/docs/beta.txt')).toEqual([{ path: '/docs/beta.txt', status: 304 }]);
    for (const doc of await documents('site')) expect(doc.version).toBe(1);
  });

  it('makes a changed page a new version of its document', async () => {
    serve('/docs/alpha.md', {
      body: page('alpha', 'now with a section on marzipan'),
      etag: '"alpha-2"',
      type: 'text/markdown',
    });
    const run = await syncAndWait(svc, id);
    // alpha.md changed, and so did /moved, which leads to it.
    expect(run.counts).toMatchObject({ updated: 2, unchanged: 2 });
    const alpha = (await documents('site')).find((d) => d.source_item === `${origin}/docs/alpha.md`);
    expect(alpha?.version).toBe(2);
    const versions = await svc.request('GET', `/api/v1/documents/${alpha?.document_id}/versions`);
    expect(versions.body.versions[0]).toMatchObject({
      change_reason: 'sync: changed at source',
      created_by: `source:${id}`,
    });
  });
});

describe('web source with a sitemap', () => {
  it('follows a sitemap index to its pages, with the patterns applied', async () => {
    const res = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'mapped', kind: 'web', sitemap: `${origin}/index.xml`, exclude: ['**/drafts/**'] },
    });
    expect(res.status).toBe(201);
    const run = await syncAndWait(svc, res.body.id);
    expect(run.counts).toMatchObject({ seen: 2, created: 2, failed: 0 });
    expect((await documents('mapped')).map((d) => d.source_item).sort()).toEqual([
      `${origin}/docs/alpha.md`,
      `${origin}/docs/beta.txt`,
    ]);
  });

  it('fails the run with source-unreachable when the sitemap is gone', async () => {
    const res = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'lost', kind: 'web', sitemap: `${origin}/gone.xml` },
    });
    const run = await syncAndWait(svc, res.body.id);
    expect(run.status).toBe('failed');
    expect(run.errors[0]).toMatchObject({ item: null, code: 'source-unreachable' });
  });
});

describe('outbound policy', () => {
  it('refuses loopback and private targets unless the operator allows them (422)', async () => {
    for (const json of [
      { name: 'w', kind: 'web', urls: [`${origin}/docs/alpha.md`] },
      { name: 'w', kind: 'web', sitemap: 'http://10.1.2.3/sitemap.xml' },
      { name: 's', kind: 's3', endpoint: 'http://169.254.169.254', bucket: 'b' },
    ]) {
      const res = await guarded.request('POST', '/api/v1/sources', { json });
      expectProblem(res, 422, 'validation-error');
    }
    expect((await guarded.request('GET', '/api/v1/sources')).body.sources).toEqual([]);
    expectProblem(
      await svc.request('POST', '/api/v1/sources', { json: { name: 'x', kind: 'web', urls: ['ftp://example.com/a'] } }),
      422,
      'validation-error',
    );
    expectProblem(
      await svc.request('POST', '/api/v1/sources', {
        json: { name: 'x', kind: 'web', urls: [`${origin}/a`], path: '/tmp' },
      }),
      422,
      'validation-error',
    );
  });
});

describe('outbound policy: IPv6 forms of loopback', () => {
  it.each(LOOPBACK_FORMS.map((f) => [f.form, f]))(
    'refuses the %s form as a URL literal and as what a name resolves to (422 naming the field)',
    async (_form, form) => {
      const port = new URL(origin).port;
      const named = `http://${form.name}:${port}`;
      for (const [json, field] of [
        [{ name: 'w', kind: 'web', urls: [`${literalOrigin(form, port)}/docs/alpha.md`] }, 'urls/0'],
        [{ name: 'w', kind: 'web', urls: [`${named}/docs/alpha.md`] }, 'urls/0'],
        [{ name: 'w', kind: 'web', sitemap: `${literalOrigin(form, port)}/sitemap.xml` }, 'sitemap'],
        [{ name: 'w', kind: 'web', sitemap: `${named}/sitemap.xml` }, 'sitemap'],
        [{ name: 's', kind: 's3', endpoint: literalOrigin(form, port), bucket: 'b' }, 'endpoint'],
        [{ name: 's', kind: 's3', endpoint: named, bucket: 'b' }, 'endpoint'],
      ] as const) {
        const problem = expectProblem(
          await guarded.request('POST', '/api/v1/sources', { json }),
          422,
          'validation-error',
        );
        expect(problem.errors?.[0]?.field, JSON.stringify(json)).toBe(field);
        expect(problem.errors?.[0]?.message).toMatch(/is not a public address/);
      }
      expect((await guarded.request('GET', '/api/v1/sources')).body.sources).toEqual([]);
    },
  );

  it('refuses at sync time a page whose name has come to resolve to an IPv6 form of loopback', async () => {
    const port = new URL(origin).port;
    names.set('rebinding.example.test', '93.184.216.34');
    const res = await guarded.request('POST', '/api/v1/sources', {
      json: { name: 'rebinding', kind: 'web', urls: [`http://rebinding.example.test:${port}/docs/alpha.md`] },
    });
    expect(res.status, res.text).toBe(201);
    names.set('rebinding.example.test', '::ffff:0:7f00:1');
    hits.length = 0;
    const run = await syncAndWait(guarded, res.body.id);
    expect(run.counts).toMatchObject({ created: 0 });
    expect(run.errors.map((e) => e.code)).toEqual(['outbound-refused']);
    expect(hits).toEqual([]);
  });
});
