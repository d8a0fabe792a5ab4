/**
 * `Idempotency-Key` on the writes, on the embedded runtime over a real socket: a client that lost
 * an answer sends the request again and gets the answer, not a second write.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../core/errors/kb-error.ts';
import { type FormFile, uniqueFile, uploadAndLoseAnswer, uploadForm } from '../support/lost-answer.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;

beforeAll(async () => {
  // No stages: uploads stay pending; what counts here is how many documents and versions exist.
  svc = await startTestService({ stages: 'none' });
});
afterAll(async () => {
  await svc?.close();
});

/** Sends an upload with `key` and loses its answer (see `uploadAndLoseAnswer`). */
const lostUpload = (key: string, file: FormFile, mode: 'cut' | 'drop') =>
  uploadAndLoseAnswer(svc.url, { 'X-API-Key': svc.keys.all, 'Idempotency-Key': key }, file, mode);

const upload = (key: string | null, file: FormFile, fields: Record<string, string> = {}, apiKey = svc.keys.all) =>
  svc.request('POST', '/api/v1/documents', {
    body: uploadForm(file, fields),
    key: apiKey,
    headers: key === null ? {} : { 'idempotency-key': key },
  });

/** The documents of the workspace named `name` (the file name is unique per test). */
async function documentsNamed(name: string, apiKey = svc.keys.all): Promise<Array<{ id: string; version: number }>> {
  const list = await svc.request('GET', '/api/v1/documents?limit=100', { key: apiKey });
  expect(list.status).toBe(200);
  return (list.body.documents as Array<{ id: string; name: string; version: number }>).filter((d) => d.name === name);
}

describe('a retried upload whose answer was lost', () => {
  for (const mode of ['cut', 'drop'] as const) {
    it(`creates one document (connection ${mode === 'cut' ? 'cut after the body' : 'closed on the answer'})`, async () => {
      const key = randomUUID();
      const file = uniqueFile(`lost-${mode}`);
      await lostUpload(key, file, mode);
      const retry = await upload(key, file);
      expect(retry.status, retry.text).toBe(201);
      const again = await upload(key, file);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(retry.text);
      const documents = await documentsNamed(file.name);
      expect(documents.map((d) => d.id)).toEqual([retry.body.document_id]);
      if (mode === 'drop') {
        // The first request certainly ran (it answered): the retry is its answer again.
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
      }
    });
  }
});

describe('replays', () => {
  it('answer a repeated upload with the first answer, byte for byte, and store one file', async () => {
    const key = randomUUID();
    const file = uniqueFile('replayed');
    const objectsBefore = (await svc.storedObjects()).length;
    const first = await upload(key, file, { metadata: '{"team":"docs"}', source: 'crm' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same form with its fields in another order and another multipart boundary.
    const f = new FormData();
    f.append('file', new Blob([file.content], { type: 'text/plain' }), file.name);
    f.append('source', 'crm');
    f.append('metadata', '{"team":"docs"}');
    const second = await svc.request('POST', '/v1/documents', { body: f, headers: { 'idempotency-key': key } });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.text).toBe(first.text);
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await documentsNamed(file.name)).toHaveLength(1);
    expect((await svc.storedObjects()).length).toBe(objectsBefore + 1);
  });

  it('answer a repeated metadata change, rollback, content replacement and delete without doing them again', async () => {
    const file = uniqueFile('versions');
    const created = await upload(null, file);
    const id = created.body.document_id as string;
    const patch = { metadata: { stage: 'final' }, change_reason: 'label' };
    const patchKey = randomUUID();
    const patched = await svc.request('PATCH', `/api/v1/documents/${id}`, {
      json: patch,
      headers: { 'idempotency-key': patchKey },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toBe(2);
    // Members in another order make the same request.
    const patchedAgain = await svc.request('PATCH', `/api/v1/documents/${id}`, {
      json: { change_reason: 'label', metadata: { stage: 'final' } },
      headers: { 'idempotency-key': patchKey },
    });
    expect(patchedAgain.status).toBe(200);
    expect(patchedAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(patchedAgain.text).toBe(patched.text);

    const replaceKey = randomUUID();
    const replaced = await svc.request('PUT', `/api/v1/documents/${id}`, {
      body: uploadForm({ name: file.name, content: 'Second content.\n' }),
      headers: { 'idempotency-key': replaceKey },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.version).toBe(3);
    const replacedAgain = await svc.request('PUT', `/api/v1/documents/${id}`, {
      body: uploadForm({ name: file.name, content: 'Second content.\n' }),
      headers: { 'idempotency-key': replaceKey },
    });
    expect(replacedAgain.text).toBe(replaced.text);

    const rollbackKey = randomUUID();
    const rollback = () =>
      svc.request('POST', `/api/v1/documents/${id}/rollback`, {
        json: { target_version: 1 },
        headers: { 'idempotency-key': rollbackKey },
      });
    const rolledBack = await rollback();
    expect(rolledBack.status).toBe(201);
    expect(rolledBack.body.version).toBe(4);
    const rolledBackAgain = await rollback();
    expect(rolledBackAgain.status).toBe(201);
    expect(rolledBackAgain.text).toBe(rolledBack.text);

    const history = await svc.request('GET', `/api/v1/documents/${id}/versions`);
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2, 1]);

    const deleteKey = randomUUID();
    const remove = () =>
      svc.request('DELETE', `/api/v1/documents/${id}`, { headers: { 'idempotency-key': deleteKey } });
    const deleted = await remove();
    expect(deleted.status).toBe(204);
    const deletedAgain = await remove();
    expect(deletedAgain.status).toBe(204);
    expect(deletedAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(deletedAgain.text).toBe('');
    // Without the key, the second delete is a new request: the document is gone.
    expectProblem(await svc.request('DELETE', `/api/v1/documents/${id}`), 404, 'not-found');
    // Another query is another request.
    expectProblem(
      await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`, { headers: { 'idempotency-key': deleteKey } }),
      422,
      'validation-error',
    );
  });
});

describe('one key, another request', () => {
  it('is refused with 422 and changes nothing, for another file or other fields', async () => {
    const key = randomUUID();
    const file = uniqueFile('reused');
    expect((await upload(key, file)).status).toBe(201);
    for (const [other, fields] of [
      [{ ...file, content: `${file.content}changed\n` }, {}],
      [file, { source: 'elsewhere' }],
      [{ ...file, name: `renamed-${file.name}` }, {}],
    ] as const) {
      const res = await upload(key, other, fields);
      const problem = expectProblem(res, 422, 'validation-error');
      expect(problem.title).toBe('Idempotency-Key used for another request');
      expect(problem.detail).toContain('Idempotency-Key');
    }
    const patch = await svc.request('PATCH', `/api/v1/documents/${randomUUID()}`, {
      json: { metadata: {} },
      headers: { 'idempotency-key': key },
    });
    expectProblem(patch, 422, 'validation-error');
    expect(await documentsNamed(file.name)).toHaveLength(1);
    expect(await documentsNamed(`renamed-${file.name}`)).toHaveLength(0);
  });
});

describe('concurrent requests with one key', () => {
  it('apply once: every one answers the same document, one of them ran', async () => {
    const key = randomUUID();
    const file = uniqueFile('concurrent');
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(key, file)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(201);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await documentsNamed(file.name)).toHaveLength(1);
  });

  it('of different requests: one runs, the others are refused with 422', async () => {
    const key = randomUUID();
    const files = Array.from({ length: 4 }, (_, i) => uniqueFile(`race-${i}`));
    const answers = await Promise.all(files.map((file) => upload(key, file)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 201)) expectProblem(answer, 422, 'validation-error');
    const created = (await Promise.all(files.map((f) => documentsNamed(f.name)))).flat();
    expect(created).toHaveLength(1);
  });
});

describe('keys', () => {
  it('belong to one API key: the same key of another key or workspace is another request', async () => {
    const key = randomUUID();
    const file = uniqueFile('scoped');
    const second = await svc.createKey({ permissions: ['read', 'write'] });
    const mine = await upload(key, file);
    const sameWorkspace = await upload(key, file, {}, second.key);
    const otherWorkspace = await upload(key, file, {}, svc.keys.otherWorkspace);
    for (const res of [mine, sameWorkspace, otherWorkspace]) {
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([mine, sameWorkspace, otherWorkspace].map((r) => r.body.document_id)).size).toBe(3);
    expect(await documentsNamed(file.name)).toHaveLength(2);
    expect(await documentsNamed(file.name, svc.keys.otherWorkspace)).toHaveLength(1);
  });

  it('are at most 255 printable ASCII characters; a malformed one is 400 before anything is stored', async () => {
    const file = uniqueFile('malformed');
    for (const bad of ['k'.repeat(256), '"unterminated\\"', '""']) {
      const res = await upload(bad, file);
      const problem = expectProblem(res, 400, 'bad-request');
      expect(problem.title).toBe('Invalid Idempotency-Key');
    }
    const patch = await svc.request('PATCH', `/api/v1/documents/${randomUUID()}`, {
      json: { metadata: {} },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expectProblem(patch, 400, 'bad-request');
    expect(await documentsNamed(file.name)).toHaveLength(0);
    const longest = await upload(`a${'~'.repeat(253)}b`, file);
    expect(longest.status).toBe(201);
  });

  it('may be sent as a quoted structured-field string, the same key as unquoted', async () => {
    const key = `order-${randomUUID()}`;
    const file = uniqueFile('quoted');
    expect((await upload(`"${key}"`, file)).status).toBe(201);
    const again = await upload(key, file);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await documentsNamed(file.name)).toHaveLength(1);
  });
});

describe('refused requests', () => {
  it('are not stored: the same key with the request corrected runs', async () => {
    const key = randomUUID();
    const file = uniqueFile('corrected');
    const refused = await upload(key, file, { metadata: 'not json' });
    expectProblem(refused, 422, 'validation-error');
    const empty = await upload(key, { ...file, content: '' });
    expectProblem(empty, 400, 'bad-request');
    const corrected = await upload(key, file, { metadata: '{"ok":true}' });
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    expect(await documentsNamed(file.name)).toHaveLength(1);
  });

  it('are stored when the write ran and found the state wanting (404), like any answer', async () => {
    const key = randomUUID();
    const missing = randomUUID();
    const first = await svc.request('POST', `/api/v1/documents/${missing}/reprocess`, {
      headers: { 'idempotency-key': key },
    });
    expectProblem(first, 404, 'not-found');
    const second = await svc.request('POST', `/api/v1/documents/${missing}/reprocess`, {
      headers: { 'idempotency-key': key },
    });
    expect(second.status).toBe(404);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
  });
});

describe('failures of the service', () => {
  it('are not stored: after a 503 the same request with the same key runs again', async () => {
    const key = randomUUID();
    const file = uniqueFile('unavailable');
    const log = svc.runtime.ports.log;
    const publish = log.publish;
    log.publish = async () => {
      throw new KbError('engine-unavailable', 'The message log is unavailable.');
    };
    let failed: Awaited<ReturnType<typeof upload>>;
    try {
      failed = await upload(key, file);
    } finally {
      log.publish = publish;
    }
    expectProblem(failed, 503, 'service-unavailable');
    expect(await documentsNamed(file.name)).toHaveLength(0);
    const retried = await upload(key, file);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await documentsNamed(file.name)).toHaveLength(1);
  });
});

describe('a restart of the service', () => {
  it('keeps the answers: a retry after it creates no second document', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-idempotency-restart-'));
    const key = randomUUID();
    const file = uniqueFile('restart');
    const first = await startTestService({ stages: 'none', dataDir: dir });
    let second: TestService | undefined;
    try {
      const apiKey = first.keys.all;
      const created = await first.request('POST', '/api/v1/documents', {
        body: uploadForm(file),
        headers: { 'idempotency-key': key },
      });
      expect(created.status).toBe(201);
      await first.close();
      second = await startTestService({ stages: 'none', dataDir: dir });
      const retried = await second.request('POST', '/api/v1/documents', {
        body: uploadForm(file),
        key: apiKey,
        headers: { 'idempotency-key': key },
      });
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.text).toBe(created.text);
      const list = await second.request('GET', '/api/v1/documents', { key: apiKey });
      expect(list.body.documents.map((d: { id: string }) => d.id)).toEqual([created.body.document_id]);
    } finally {
      // Closing twice is harmless; the first may still be open if a step failed.
      await first.close().catch(() => {});
      await second?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the OpenAPI document', () => {
  it('offers the Idempotency-Key header on every write of the resource API, and the replay header', async () => {
    const doc = (await svc.request('GET', '/openapi.json')).body;
    const writes: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(item as Record<string, Record<string, unknown>>)) {
        // Search and lookup are POSTs that only read; minting a token stores nothing (a retry mints another).
        const reads = ['/api/v1/search', '/api/v1/documents/lookup', '/api/v1/tokens'];
        if (!['post', 'put', 'patch', 'delete'].includes(method) || reads.includes(path)) continue;
        writes.push(`${method} ${path}`);
        const parameters = (operation.parameters ?? []) as Array<{ $ref?: string }>;
        expect(
          parameters.some((p) => p.$ref === '#/components/parameters/IdempotencyKey'),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
    expect(writes).toContain('post /api/v1/documents');
    expect(writes).toContain('delete /api/v1/documents/{id}');
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
    expect(doc.components.headers['Idempotent-Replayed']).toBeDefined();
  });
});
