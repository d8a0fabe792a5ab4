import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  DockerComposeEnvironment,
  getContainerRuntimeClient,
  type StartedDockerComposeEnvironment,
  Wait,
} from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';

/**
 * The docker-compose stack (official images of every engine, the API and one worker per stage)
 * end to end through Testcontainers. It needs a container engine; where none runs, the suite is
 * skipped and its title says why. `deploy/native/` + `npm run test:integration` cover the same
 * scenario on machines without one.
 */
async function containerEngine(): Promise<string | null> {
  try {
    const client = await getContainerRuntimeClient();
    return client.info.containerRuntime.host ? null : 'no container runtime host';
  } catch (error) {
    return error instanceof Error ? (error.message.split('\n')[0] ?? 'unavailable') : String(error);
  }
}

const unavailable = await containerEngine();
const suite = unavailable === null ? describe : describe.skip;
const title =
  unavailable === null
    ? 'docker compose stack (Testcontainers)'
    : `docker compose stack (Testcontainers) — skipped: no container engine here (${unavailable})`;

suite(title, () => {
  let environment: StartedDockerComposeEnvironment;
  let key: string;
  const base = 'http://127.0.0.1:8080';

  beforeAll(async () => {
    environment = await new DockerComposeEnvironment(REPO_ROOT, 'docker-compose.yml')
      .withBuild()
      .withWaitStrategy('api-1', Wait.forHttp('/health/ready', 8080))
      .up();
    const api = environment.getContainer('api-1');
    const created = await api.exec([
      'node',
      'bin/kb.js',
      'keys',
      'create',
      '--workspace',
      'compose',
      '--name',
      'e2e',
      '--permissions',
      'read,search,write',
      '--json',
    ]);
    key = (JSON.parse(created.output.trim().split('\n').at(-1) ?? '{}') as { key: string }).key;
  }, 900_000);

  afterAll(async () => {
    await environment?.down({ removeVolumes: true });
  }, 300_000);

  it('uploads, completes and finds a document', async () => {
    const form = new FormData();
    form.append(
      'file',
      new Blob([await readFile(path.join(REPO_ROOT, 'tests/fixtures/files/sample.md'))]),
      'sample.md',
    );
    const uploaded = await fetch(`${base}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': key },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const { document_id: id } = (await uploaded.json()) as { document_id: string };
    const deadline = Date.now() + 300_000;
    let status = 'pending';
    while (status !== 'completed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      const doc = (await (await fetch(`${base}/api/v1/documents/${id}`, { headers: { 'X-API-Key': key } })).json()) as {
        status: string;
      };
      status = doc.status;
      expect(status).not.toBe('failed');
    }
    expect(status).toBe('completed');
    const chunks = (await (await fetch(`${base}/api/v1/chunks/${id}`, { headers: { 'X-API-Key': key } })).json()) as {
      chunks: Array<{ content: string }>;
    };
    const word = chunks.chunks[0]?.content.match(/\p{L}{6,}/u)?.[0] ?? '';
    const search = await fetch(`${base}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: word, mode: 'keyword' }),
    });
    const results = ((await search.json()) as { results: Array<{ document_id: string }> }).results;
    expect(results.map((r) => r.document_id)).toContain(id);
  });
});
