import { afterEach, describe, expect, it } from 'vitest';
import { type ChildService, createKey, kb, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

/**
 * Many processes starting at once on fresh engine state: one API, four workers and a
 * `kb keys create`, all launched at the same moment against a topic prefix, OpenSearch index
 * prefix, ClickHouse database and bucket that do not exist yet, so every process runs the whole
 * set-up (topics, schema subjects and their compatibility, indexes, tables, bucket) concurrently.
 */
const ROUNDS = 10;
const WORKER_STAGES = ['parse', 'chunk', 'embed', 'index'];

let setups: DistributedEnv[] = [];
let children: ChildService[] = [];

afterEach(async () => {
  await Promise.allSettled(children.map((child) => stopChild(child)));
  await Promise.allSettled(setups.map((setup) => setup.cleanup()));
  children = [];
  setups = [];
});

/** Resolves when a worker says it runs its stages; rejects with its output when it exits first. */
async function workerReady(worker: ChildService, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!worker.output().includes('kb worker running stages')) {
    if (worker.process.exitCode !== null) {
      throw new Error(`a worker exited with ${worker.process.exitCode} at start:\n${worker.output()}`);
    }
    if (Date.now() > deadline) throw new Error(`a worker did not start within ${timeoutMs} ms:\n${worker.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function uploadAndWait(api: string, key: string, text: string): Promise<Record<string, unknown>> {
  const form = new FormData();
  form.append('file', new Blob([text]), 'race.txt');
  const created = await fetch(`${api}/api/v1/documents`, { method: 'POST', headers: { 'X-API-Key': key }, body: form });
  const body = (await created.json()) as Record<string, unknown>;
  expect(created.status, JSON.stringify(body)).toBe(201);
  const id = String(body.document_id ?? body.id);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const document = (await (
      await fetch(`${api}/api/v1/documents/${id}`, { headers: { 'X-API-Key': key } })
    ).json()) as Record<string, unknown>;
    if (document.status === 'completed' || document.status === 'failed') return document;
    if (Date.now() > deadline) throw new Error(`document ${id} stayed ${String(document.status)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('processes starting at once on fresh engines', () => {
  it(`one API, four workers and kb keys create come up together, ${ROUNDS} times in a row`, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const setup = distributedEnv();
      setups.push(setup);
      const env = { ...setup.env, KB_STARTUP_TIMEOUT_MS: '60000' };
      const workers = WORKER_STAGES.map((stage) =>
        startChild(['worker', '--stages', stage, '--metrics-port', '0'], env, { waitForHttp: false }),
      );
      const [api, key, ...started] = await Promise.all([
        startChild(['serve', '--stages', 'none'], env, { timeoutMs: 120_000 }),
        createKey(env, { workspace: 'race', name: `round-${round}`, permissions: 'read,write,search' }),
        ...workers,
      ]);
      children.push(api, ...started);
      await Promise.all(started.map((worker) => workerReady(worker)));
      expect(key.key, `round ${round}`).toMatch(/\S{20,}/);

      // Every stage's consumer joined: a document goes through all four workers.
      const document = await uploadAndWait(api.url, key.key, `Round ${round} of the concurrent start-up test.`);
      expect(document.status, `round ${round}: ${JSON.stringify(document)}`).toBe('completed');

      await Promise.allSettled(children.map((child) => stopChild(child)));
      children = [];
      await setup.cleanup();
      setups = [];
    }
  }, 1_200_000);

  it('refuses to start, naming both levels, when a schema subject holds another compatibility', async () => {
    const setup = distributedEnv();
    setups.push(setup);
    await createKey(setup.env, { workspace: 'race', name: 'first', permissions: 'read' });
    const subject = `${setup.env.KB_TOPIC_PREFIX}kb.document.uploaded-value`;
    const registry = (setup.config.runtime === 'distributed' ? setup.config.schemaRegistryUrl : '') ?? '';
    const changed = await fetch(`${registry}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'FULL' }),
    });
    expect(changed.status).toBe(200);

    const failure = await kb(['keys', 'create', '--workspace', 'race', '--name', 'second', '--permissions', 'read'], {
      ...setup.env,
      KB_STARTUP_TIMEOUT_MS: '5000',
    }).then(
      () => null,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(`Subject ${subject} has compatibility FULL`);
    expect(failure?.stderr).toContain('this service sets BACKWARD');
  });
});
