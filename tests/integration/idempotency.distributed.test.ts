import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { type FormFile, uniqueFile, uploadAndLoseAnswer, uploadForm } from '../support/lost-answer.ts';

/**
 * `Idempotency-Key` on the distributed runtime: two API processes share the keys through
 * OpenSearch, so a retry sent to another process, or to a process started again, answers the
 * first answer instead of writing twice.
 */
let setup: DistributedEnv;
let key: string;
let apiA: ChildService;
let apiB: ChildService;
const children: ChildService[] = [];

async function upload(base: string, idempotencyKey: string, file: FormFile) {
  const response = await fetch(`${base}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Idempotency-Key': idempotencyKey },
    body: uploadForm(file),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The ids of the documents named `name`, as an API process lists them (after its refresh). */
async function documentsNamed(base: string, name: string): Promise<string[]> {
  const response = await fetch(`${base}/api/v1/documents?limit=100`, { headers: { 'X-API-Key': key } });
  const body = (await response.json()) as { documents: Array<{ id: string; name: string }> };
  return body.documents.filter((d) => d.name === name).map((d) => d.id);
}

/** Waits until `base` lists a document named `name` (another process's write shows after a refresh). */
async function listedEventually(base: string, name: string): Promise<string[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ids = await documentsNamed(base, name);
    if (ids.length > 0 || Date.now() > deadline) return ids;
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  setup = distributedEnv();
  key = (await createKey(setup.env, { workspace: 'idem', name: 'idem', permissions: 'read,write', plan: 'enterprise' }))
    .key;
  const env = { ...setup.env, KB_OPENSEARCH_DOCUMENTS_REFRESH_MS: '200', KB_OPENSEARCH_CHANGE_POLL_MS: '200' };
  [apiA, apiB] = await Promise.all([
    startChild(['serve'], env, { timeoutMs: 120_000 }),
    startChild(['serve'], env, { timeoutMs: 120_000 }),
  ]);
  children.push(apiA, apiB);
}, 300_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const child of children) console.error(`--- kb serve (${child.url}) printed:\n${child.output()}`);
  });
});

afterAll(async () => {
  await Promise.allSettled(children.map((c) => stopChild(c)));
  await setup?.cleanup();
}, 120_000);

describe('Idempotency-Key across API processes', () => {
  for (const mode of ['drop', 'cut'] as const) {
    it(`a retry sent to another process after the answer was lost (${mode}) creates one document`, async () => {
      const idempotencyKey = randomUUID();
      const file = uniqueFile(`lost-${mode}`);
      await uploadAndLoseAnswer(apiA.url, { 'X-API-Key': key, 'Idempotency-Key': idempotencyKey }, file, mode);
      const retry = await upload(apiB.url, idempotencyKey, file);
      expect(retry.status, retry.text).toBe(201);
      if (mode === 'drop') expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const again = await upload(apiA.url, idempotencyKey, file);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(retry.text);
      const id = (JSON.parse(retry.text) as { document_id: string }).document_id;
      expect(await listedEventually(apiA.url, file.name)).toEqual([id]);
      expect(await listedEventually(apiB.url, file.name)).toEqual([id]);
    });
  }

  it('concurrent requests with one key to both processes apply once', async () => {
    const idempotencyKey = randomUUID();
    const file = uniqueFile('concurrent');
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => upload(i % 2 === 0 ? apiA.url : apiB.url, idempotencyKey, file)),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(201);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await listedEventually(apiA.url, file.name)).toHaveLength(1);
  });

  it('the same key with another request is 422 on the other process too', async () => {
    const idempotencyKey = randomUUID();
    const file = uniqueFile('reused');
    expect((await upload(apiA.url, idempotencyKey, file)).status).toBe(201);
    const other = await upload(apiB.url, idempotencyKey, { ...file, content: `${file.content}changed\n` });
    expect(other.status).toBe(422);
    expect(other.text).toContain('Idempotency-Key used for another request');
  });

  it('a retry to a process started again after the first answered creates one document', async () => {
    const idempotencyKey = randomUUID();
    const file = uniqueFile('restart');
    const first = await upload(apiA.url, idempotencyKey, file);
    expect(first.status).toBe(201);
    await stopChild(apiA);
    const env = { ...setup.env, PORT: new URL(apiA.url).port };
    apiA = await startChild(['serve'], env, { timeoutMs: 120_000 });
    children.push(apiA);
    const retry = await upload(apiA.url, idempotencyKey, file);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await listedEventually(apiA.url, file.name)).toHaveLength(1);
  });
});
