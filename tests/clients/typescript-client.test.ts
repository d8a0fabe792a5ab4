import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

const run = promisify(execFile);

/** What a user writes after `npm install ./clients/typescript`, against a running service. */
const SCENARIO = `
import { createKbClient, KbApiError, retryingFetch } from 'kb-document-service-client';

const kb = createKbClient({ baseUrl: process.env.KB_URL, apiKey: process.env.KB_KEY });
const out = {};
const up = await kb.upload(new Blob(['# Release notes\\n\\nThe aurora dashboard now exports reports as PDF.\\n']), {
  name: 'notes.md',
  metadata: { team: 'docs' },
});
out.upload = { status: up.status, version: up.version, name: up.name };
const doc = await kb.waitForDocument(up.document_id);
out.waited = { status: doc.status, metadata: doc.metadata, chunks: doc.stats.chunks };
const found = await kb.search({ query: 'export dashboard reports', limit: 5, mode: 'keyword' });
out.search = found.results.map((r) => ({ document_id: r.document_id, name: r.document_name, version: r.version, content: r.content }));
await kb.replace(up.document_id, new Blob(['# Release notes\\n\\nThe aurora dashboard now exports reports as PDF and CSV.\\n']), {
  name: 'notes.md',
  changeReason: 'adds CSV',
});
await kb.waitForDocument(up.document_id, { version: 2 });
out.versions = (await kb.versions(up.document_id)).versions.map((v) => [v.version, v.status, v.change_reason]);
const diff = await kb.compareVersions(up.document_id, 1, 2);
out.compare = { modified: diff.changes.modified_chunks, new: diff.changes.diff[0].new_content };
const back = await kb.rollback(up.document_id, 1);
out.rollback = { version: back.version, restored_from: back.restored_from };
out.after_rollback = (await kb.getDocument(up.document_id)).served_version;
const second = await kb.upload(new Blob(['second']), { name: 'second.txt' });
out.listed = [];
for await (const item of kb.documents({ limit: 1 })) out.listed.push(item.document_id);
out.ids = [second.document_id, up.document_id];
const { data: audit } = await kb.api.GET('/api/v1/audit-logs', { params: { query: { document_id: up.document_id } } });
out.audit = audit.entries.map((e) => e.action);
try {
  await createKbClient({ baseUrl: process.env.KB_URL, apiKey: process.env.KB_OTHER_KEY }).getDocument(up.document_id);
} catch (error) {
  out.other_workspace = { isApiError: error instanceof KbApiError, status: error.status, title: error.problem?.title };
}

// Every write carries an Idempotency-Key unless turned off: a fetch that loses the first answer
// and sends the request again (as after a network failure) creates one document with it, two without.
const twice = async (request) => {
  const copy = request.clone();
  await (await fetch(request)).arrayBuffer();
  return fetch(copy);
};
const tag = 'lost-' + Date.now();
await createKbClient({ baseUrl: process.env.KB_URL, apiKey: process.env.KB_KEY, fetch: twice })
  .upload(new Blob(['Lost: the first answer is lost.']), { name: 'lost.md', source: tag, sourceItem: 'lost.md' });
await createKbClient({ baseUrl: process.env.KB_URL, apiKey: process.env.KB_KEY, fetch: twice, idempotencyKeys: false })
  .upload(new Blob(['Lost: no key this time.']), { name: 'keyless.md', source: tag, sourceItem: 'keyless.md' });
const matches = await kb.lookup([{ source: tag, source_item: 'lost.md' }, { source: tag, source_item: 'keyless.md' }]);
out.lost = { with_key: matches.filter((m) => m.source_item === 'lost.md').length, without_key: matches.filter((m) => m.source_item === 'keyless.md').length };

// 503 then 200: sent again after Retry-After too.
let calls503 = 0;
const fetch503 = retryingFetch(async () => (++calls503 === 1 ? new Response('{}', { status: 503, headers: { 'retry-after': '0' } }) : new Response('{}', { status: 200 })), { maxRetries: 3, maxRetryAfterSeconds: 60 });
out.retry503 = { status: (await fetch503(new Request('http://kb.test/api/v1/documents', { method: 'POST', body: 'x' }))).status, attempts: calls503 };
// A scoped token for an end user: searches only its documents, and cannot read with search alone.
const minted = await kb.createToken({ expires_in: 600, permissions: ['search'], filters: { document_ids: [up.document_id] } });
const scoped = createKbClient({ baseUrl: process.env.KB_URL, apiKey: minted.token });
const scopedFound = await scoped.search({ query: 'export dashboard reports second', mode: 'keyword' });
out.scoped = { type: minted.token_type, documents: [...new Set(scopedFound.results.map((r) => r.document_id))] };
try {
  await scoped.getDocument(up.document_id);
} catch (error) {
  out.scoped.read = error.status;
}

// 429 then 200: the layer waits Retry-After and sends the request again, body included.
const bodies = [];
const fetch429 = retryingFetch(async (request) => {
  bodies.push(await request.text());
  return bodies.length === 1
    ? new Response('{}', { status: 429, headers: { 'retry-after': '1' } })
    : new Response('{"ok":true}', { status: 200 });
}, { maxRetries: 3, maxRetryAfterSeconds: 60 });
const started = Date.now();
const answered = await fetch429(new Request('http://kb.test/api/v1/search', { method: 'POST', body: '{"query":"x"}' }));
out.retry = { status: answered.status, attempts: bodies.length, same_body: bodies[0] === bodies[1], waited: Date.now() - started >= 900 };
console.log(JSON.stringify(out));
`;

describe('TypeScript client (npm install ./clients/typescript into a new project)', { timeout: 600_000 }, () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('installs as a user would and runs upload → wait → search → versions → rollback', async () => {
    const project = await tempDir('kb-ts-client-');
    try {
      await writeFile(
        path.join(project.path, 'package.json'),
        JSON.stringify({ name: 'kb-client-user', private: true, type: 'module' }),
      );
      // --install-links: a copy of the package with its own dependencies, as from a registry.
      await run(
        'npm',
        [
          'install',
          '--install-links',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          path.join(REPO_ROOT, 'clients', 'typescript'),
        ],
        { cwd: project.path, maxBuffer: 16 * 1024 * 1024 },
      );
      await writeFile(path.join(project.path, 'scenario.mjs'), SCENARIO);
      const { stdout } = await run(process.execPath, ['scenario.mjs'], {
        cwd: project.path,
        env: { ...process.env, KB_URL: svc.url, KB_KEY: svc.keys.all, KB_OTHER_KEY: svc.keys.otherWorkspace },
      });
      const out = JSON.parse(stdout);
      expect(out.upload).toEqual({ status: 'pending', version: 1, name: 'notes.md' });
      expect(out.waited).toEqual({ status: 'completed', metadata: { team: 'docs' }, chunks: 1 });
      expect(out.search[0]).toMatchObject({ name: 'notes.md', version: 1 });
      expect(out.search[0].content).toContain('exports reports as PDF.');
      expect(out.versions).toEqual([
        [2, 'completed', 'adds CSV'],
        [1, 'completed', null],
      ]);
      expect(out.compare.modified).toBe(1);
      expect(out.compare.new).toContain('PDF and CSV.');
      expect(out.rollback).toEqual({ version: 3, restored_from: 1 });
      expect(out.after_rollback).toBe(3);
      expect(out.listed).toEqual(out.ids);
      expect(out.audit).toEqual(['create', 'update', 'rollback']);
      expect(out.other_workspace).toEqual({ isApiError: true, status: 404, title: 'Not Found' });
      expect(out.scoped).toEqual({ type: 'Bearer', documents: [out.ids[1]], read: 403 });
      expect(out.retry).toEqual({ status: 200, attempts: 2, same_body: true, waited: true });
      expect(out.lost).toEqual({ with_key: 1, without_key: 2 });
      expect(out.retry503).toEqual({ status: 200, attempts: 2 });
    } finally {
      await project.remove();
    }
  });
});
