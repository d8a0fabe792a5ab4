/**
 * Writes applied by a request that never stored its `Idempotency-Key` answer (its process killed
 * after the write, or its answer a failure after the write): the retry, once the claim lapsed or
 * was given back, finds what was written and answers as the first request would have, instead of
 * writing it again. On the embedded runtime over a real socket; the kill is simulated by an
 * idempotency store whose `complete` fails for the request (the claim then stays in progress
 * until it lapses, as a killed process leaves it).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { engineUnavailable } from '../../core/errors/kb-error.ts';
import type { AuditAction } from '../../core/model/account-records.model.ts';
import { uniqueFile, uploadForm } from '../support/lost-answer.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** How long a claim holds without an answer (`KB_REQUEST_TIMEOUT_MS`, its least value). */
const LEASE_MS = 1000;

let svc: TestService;
const restore: Array<() => void> = [];

beforeAll(async () => {
  // No stages: what counts is how many documents, versions and audit entries there are.
  // A retry of a request still in progress is answered 409 at once.
  svc = await startTestService({
    stages: 'none',
    env: { KB_REQUEST_TIMEOUT_MS: String(LEASE_MS), KB_IDEMPOTENCY_WAIT_MS: '0' },
  });
});
afterEach(() => {
  for (const undo of restore.splice(0).reverse()) undo();
});
afterAll(async () => {
  await svc?.close();
});

/** The next answer stored for `key` is lost: the request runs and answers, and its claim lapses later. */
function loseNextAnswer(): void {
  const store = svc.runtime.ports.idempotency;
  const complete = store.complete;
  store.complete = async () => {
    store.complete = complete;
    throw new Error('the process was killed before it stored the answer');
  };
  restore.push(() => {
    store.complete = complete;
  });
}

/** The next publish to the topic ending in `suffix` fails (the log down for it). */
function failNextPublish(suffix: string): void {
  const log = svc.runtime.ports.log;
  const publish = log.publish.bind(log);
  log.publish = async (topic, messages) => {
    if (!topic.endsWith(suffix)) return publish(topic, messages);
    log.publish = publish;
    throw engineUnavailable('kafka', `the log refused ${topic}`);
  };
  restore.push(() => {
    log.publish = publish;
  });
}

const pastLease = () => new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));

async function auditOf(documentId: string, action: AuditAction): Promise<number> {
  const { entries } = await svc.runtime.ports.accountStore.listAudit({
    workspaceId: svc.workspaceId,
    documentId,
    action,
    limit: 100,
  });
  return entries.length;
}

async function versionsOf(id: string): Promise<number[]> {
  const history = await svc.request('GET', `/api/v1/documents/${id}/versions`);
  expect(history.status).toBe(200);
  return history.body.versions.map((v: { version: number }) => v.version);
}

describe('a retry after the first request applied its write but never stored the answer', () => {
  it('answers an upload with the document it created, and creates no second one', async () => {
    const key = randomUUID();
    const file = uniqueFile('resumed-upload');
    const send = () =>
      svc.request('POST', '/api/v1/documents', {
        body: uploadForm(file, { metadata: '{"team":"ops"}' }),
        headers: { 'idempotency-key': key },
      });
    loseNextAnswer();
    const first = await send();
    expect(first.status).toBe(201);
    // Before the claim lapses, a retry is told to come back.
    expect((await send()).status).toBe(409);
    await pastLease();
    const objectsBefore = (await svc.storedObjects()).length;
    const retry = await send();
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body).toEqual(first.body);
    // Its own staged file is discarded: no second file.
    expect((await svc.storedObjects()).length).toBe(objectsBefore);
    const list = await svc.request('GET', '/api/v1/documents?limit=100');
    expect(list.body.documents.filter((d: { name: string }) => d.name === file.name)).toHaveLength(1);
    expect(await auditOf(first.body.document_id, 'create')).toBe(1);
    // That answer is stored now.
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(retry.text);
  });

  it('answers a metadata change, a content replacement and a rollback with the version each created', async () => {
    const file = uniqueFile('resumed-versions');
    const created = await svc.request('POST', '/api/v1/documents', { body: uploadForm(file) });
    const id = created.body.document_id as string;

    const patchKey = randomUUID();
    const patch = () =>
      svc.request('PATCH', `/api/v1/documents/${id}`, {
        json: { metadata: { stage: 'final' }, change_reason: 'label' },
        headers: { 'idempotency-key': patchKey },
      });
    loseNextAnswer();
    const patched = await patch();
    expect(patched.body.version).toBe(2);
    await pastLease();
    const patchedAgain = await patch();
    expect(patchedAgain.status, patchedAgain.text).toBe(200);
    expect(patchedAgain.body).toMatchObject({ id, version: 2, metadata: { stage: 'final' } });

    const replaceKey = randomUUID();
    const replace = () =>
      svc.request('PUT', `/api/v1/documents/${id}`, {
        body: uploadForm({ name: file.name, content: 'Second content.\n' }),
        headers: { 'idempotency-key': replaceKey },
      });
    loseNextAnswer();
    const replaced = await replace();
    expect(replaced.body.version).toBe(3);
    await pastLease();
    const replacedAgain = await replace();
    expect(replacedAgain.status, replacedAgain.text).toBe(200);
    expect(replacedAgain.body).toMatchObject({ id, version: 3, content_hash: replaced.body.content_hash });

    const rollbackKey = randomUUID();
    const rollback = () =>
      svc.request('POST', `/api/v1/documents/${id}/rollback`, {
        json: { target_version: 1 },
        headers: { 'idempotency-key': rollbackKey },
      });
    loseNextAnswer();
    const rolledBack = await rollback();
    expect(rolledBack.status).toBe(201);
    await pastLease();
    const rolledBackAgain = await rollback();
    expect(rolledBackAgain.status, rolledBackAgain.text).toBe(201);
    expect(rolledBackAgain.body).toEqual({ ...rolledBack.body, status: rolledBackAgain.body.status });
    expect(rolledBackAgain.body).toMatchObject({ version: 4, restored_from: 1 });

    expect(await versionsOf(id)).toEqual([4, 3, 2, 1]);
    expect(await auditOf(id, 'update')).toBe(2);
    expect(await auditOf(id, 'rollback')).toBe(1);
  });

  it('answers a delete 204, not 404, and audits it once', async () => {
    const created = await svc.request('POST', '/api/v1/documents', { body: uploadForm(uniqueFile('resumed-delete')) });
    const id = created.body.document_id as string;
    const key = randomUUID();
    const remove = () => svc.request('DELETE', `/api/v1/documents/${id}`, { headers: { 'idempotency-key': key } });
    loseNextAnswer();
    expect((await remove()).status).toBe(204);
    await pastLease();
    const again = await remove();
    expect(again.status, again.text).toBe(204);
    expect(await auditOf(id, 'delete')).toBe(1);
    // Another key is another request: the document is gone.
    expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(404);
  });
});

describe('a write that failed after it was applied', () => {
  it('is found by the retry with the same key, which answers it instead of writing again', async () => {
    const created = await svc.request('POST', '/api/v1/documents', { body: uploadForm(uniqueFile('failed-after')) });
    const id = created.body.document_id as string;
    const key = randomUUID();
    const patch = () =>
      svc.request('PATCH', `/api/v1/documents/${id}`, {
        json: { metadata: { lang: 'de' } },
        headers: { 'idempotency-key': key },
      });
    // The version is recorded, then its event cannot be published: 503, the key given back.
    failNextPublish('.uploaded');
    expect((await patch()).status).toBe(503);
    const retry = await patch();
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body).toMatchObject({ version: 2, metadata: { lang: 'de' } });
    expect(await versionsOf(id)).toEqual([2, 1]);
    expect(await auditOf(id, 'update')).toBe(1);
  });

  it('keeps the file of an upload whose store answered a failure after recording it, so the retry is ingested', async () => {
    // A full service: the version must reach `completed`, not fail its parse for a missing file.
    const full = await startTestService({ stages: 'all' });
    try {
      const documents = full.runtime.ports.documents;
      const createDocument = documents.createDocument.bind(documents);
      documents.createDocument = async (input) => {
        documents.createDocument = createDocument;
        await createDocument(input);
        throw engineUnavailable('opensearch', 'the connection was reset before the answer');
      };
      const key = randomUUID();
      const file = uniqueFile('applied-then-failed');
      const send = () =>
        full.request('POST', '/api/v1/documents', { body: uploadForm(file), headers: { 'idempotency-key': key } });
      const first = await send();
      expect(first.status, first.text).toBe(503);
      const retry = await send();
      expect(retry.status, retry.text).toBe(201);
      const id = retry.body.document_id as string;
      const list = await full.request('GET', '/api/v1/documents?limit=100');
      expect(list.body.documents.filter((d: { name: string }) => d.name === file.name)).toHaveLength(1);
      const deadline = Date.now() + 30_000;
      let doc = await full.request('GET', `/api/v1/documents/${id}`);
      while (doc.body.status !== 'completed' && doc.body.status !== 'failed' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        doc = await full.request('GET', `/api/v1/documents/${id}`);
      }
      expect(doc.body.error).toBeNull();
      expect(doc.body).toMatchObject({ status: 'completed', version: 1 });
    } finally {
      await full.close();
    }
  });

  it('answers a delete whose notification the log refused 204, and publishes the notification after all', async () => {
    const created = await svc.request('POST', '/api/v1/documents', { body: uploadForm(uniqueFile('notify-later')) });
    const id = created.body.document_id as string;
    const published: string[] = [];
    const log = svc.runtime.ports.log;
    const publish = log.publish.bind(log);
    log.publish = async (topic, messages) => {
      await publish(topic, messages);
      for (const message of messages) {
        const type = (message.value as { type?: unknown }).type;
        if (topic.endsWith('.notification') && message.key === id) published.push(String(type));
      }
    };
    restore.push(() => {
      log.publish = publish;
    });
    failNextPublish('.notification');
    const key = randomUUID();
    const deleted = await svc.request('DELETE', `/api/v1/documents/${id}`, { headers: { 'idempotency-key': key } });
    expect(deleted.status, deleted.text).toBe(204);
    const again = await svc.request('DELETE', `/api/v1/documents/${id}`, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const deadline = Date.now() + 10_000;
    while (!published.includes('document.deleted') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(published).toEqual(['document.deleted']);
    expect(await auditOf(id, 'delete')).toBe(1);
  });
});
