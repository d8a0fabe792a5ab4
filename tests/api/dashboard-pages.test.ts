import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../support/dashboard-client.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/** How the service serves a dashboard build (a small stand-in build here; the real one in the browser suite). */
describe('dashboard pages', () => {
  let dir: string;
  let svc: TestService;
  let unbuilt: TestService;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kb-dashboard-build-'));
    await mkdir(path.join(dir, 'built', 'assets'), { recursive: true });
    await writeFile(path.join(dir, 'built', 'index.html'), '<!doctype html><title>shell</title>');
    await writeFile(path.join(dir, 'built', 'assets', 'index-abc123.js'), 'console.log("app")');
    svc = await startTestService({ stages: 'none', dashboardDir: path.join(dir, 'built') });
    unbuilt = await startTestService({ stages: 'none', dashboardDir: path.join(dir, 'missing') });
  });
  afterAll(async () => {
    await svc?.close();
    await unbuilt?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the page shell for every page path, with a same-origin content security policy', async () => {
    for (const page of ['/dashboard/', '/dashboard/documents', '/dashboard/documents/0199-x?version=2']) {
      const res = await send(`${svc.url}${page}`, 'GET', {});
      expect(res.status, page).toBe(200);
      expect(res.text).toContain('<title>shell</title>');
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    const bare = await send(`${svc.url}/dashboard`, 'GET', {});
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/dashboard/');
  });

  it('serves built files as they are, cached for good, and nothing that is not in the build', async () => {
    const js = await send(`${svc.url}/dashboard/assets/index-abc123.js`, 'GET', {});
    expect(js.status).toBe(200);
    expect(js.text).toBe('console.log("app")');
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expectProblem(await send(`${svc.url}/dashboard/assets/missing.js`, 'GET', {}), 404, 'not-found');
    expectProblem(await send(`${svc.url}/dashboard/assets/..%2f..%2fpackage.json`, 'GET', {}), 404, 'not-found');
    expectProblem(await send(`${svc.url}/dashboard/api/nothing-here`, 'GET', {}), 404, 'not-found');
  });

  it('says how to build the dashboard when it is not built, and the API still answers', async () => {
    const res = await send(`${unbuilt.url}/dashboard/`, 'GET', {});
    expect(res.status).toBe(503);
    expect(res.text).toContain('npm run build:dashboard');
    expect((await unbuilt.request('GET', '/api/v1/documents')).status).toBe(200);
  });
});
