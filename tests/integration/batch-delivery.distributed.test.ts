import { afterEach, describe, expect, it } from 'vitest';
import { type ChildService, createKey, startChild, stopChild, waitForDocument } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

/**
 * The pipeline on the engines with many documents in flight at once, so that each stage is
 * delivered batches of several documents whose store work goes out together (shared `_mget` and
 * `_bulk` requests): one failing document fails alone; a process killed or stopped in the middle
 * of such batches leaves them half applied and uncommitted, and after a restart every document
 * completes once, with exactly its chunks.
 */
const DOCUMENTS = 16;

let setups: DistributedEnv[] = [];
let children: ChildService[] = [];
afterEach(async () => {
  await Promise.allSettled(children.map((child) => stopChild(child, 'SIGKILL')));
  await Promise.allSettled(setups.map((setup) => setup.cleanup()));
  children = [];
  setups = [];
});

async function start(env: Record<string, string>): Promise<ChildService> {
  const child = await startChild(['serve', '--stages', 'all'], env, { timeoutMs: 120_000 });
  children.push(child);
  return child;
}

function note(i: number): string {
  const lines = Array.from(
    { length: 30 + (i % 5) * 20 },
    (_, n) => `Line ${n} of note ${i}: the harbour master counted ${n * 7 + i} crates of amber tea.`,
  );
  return `# Batch note ${i}\n\n${lines.join('\n\n')}\n`;
}

async function upload(api: string, key: string, name: string, body: Blob): Promise<string> {
  const form = new FormData();
  form.append('file', body, name);
  const response = await fetch(`${api}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  const answer = (await response.json()) as { document_id?: string };
  expect(response.status, JSON.stringify(answer)).toBe(201);
  return String(answer.document_id);
}

/** Uploads `files` four at a time (a key may have at most 8 uploads in flight); their ids in order. */
async function uploadAll(
  api: string,
  key: string,
  files: ReadonlyArray<{ name: string; body: Blob }>,
): Promise<string[]> {
  const ids: string[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const file = files[i] as { name: string; body: Blob };
      ids[i] = await upload(api, key, file.name, file.body);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return ids;
}

const notes = () => Array.from({ length: DOCUMENTS }, (_, i) => ({ name: `note-${i}.md`, body: new Blob([note(i)]) }));

/** Chunks the chunks index holds for a document (after a refresh), whatever their version. */
async function storedChunks(setup: DistributedEnv, documentId: string): Promise<number> {
  const base = setup.env.KB_OPENSEARCH_URL;
  const index = `${setup.env.KB_OPENSEARCH_INDEX_PREFIX}-chunks`;
  await fetch(`${base}/${index}/_refresh`, { method: 'POST' });
  const response = await fetch(`${base}/${index}/_count`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: { term: { document_id: documentId } } }),
  });
  return ((await response.json()) as { count: number }).count;
}

async function expectCompletedOnce(setup: DistributedEnv, api: string, key: string, ids: readonly string[]) {
  for (const id of ids) {
    const document = await waitForDocument(api, key, id, ['completed', 'failed'], 240_000);
    expect(document.status, JSON.stringify(document)).toBe('completed');
    const chunkCount = (document.stats as { chunks: number }).chunks;
    expect(chunkCount).toBeGreaterThan(0);
    expect(await storedChunks(setup, id), `chunks of ${id}`).toBe(chunkCount);
  }
}

describe('batches of documents on the engines', () => {
  it('one failing document in a batch fails alone; the others complete', async () => {
    const setup = distributedEnv();
    setups.push(setup);
    const { key } = await createKey(setup.env, { workspace: 'batch', name: 'b', permissions: 'read,write' });
    const api = await start(setup.env);
    // A PDF whose body is not a PDF, among the notes: the parse stage refuses it for good.
    const files = notes();
    files.splice(DOCUMENTS / 2, 0, {
      name: 'broken.pdf',
      body: new Blob(['%PDF-1.7\n', 'not really a pdf '.repeat(200)]),
    });
    const all = await uploadAll(api.url, key, files);
    const failedId = all[DOCUMENTS / 2] as string;
    const ids = all.filter((id) => id !== failedId);
    const failed = await waitForDocument(api.url, key, failedId, ['completed', 'failed'], 240_000);
    expect(failed.status).toBe('failed');
    expect((failed.error as { stage?: string } | undefined)?.stage).toBe('parse');
    await expectCompletedOnce(setup, api.url, key, ids);
  });

  it('a process killed in the middle of batches: after a restart every document completes once', async () => {
    const setup = distributedEnv();
    setups.push(setup);
    const { key } = await createKey(setup.env, { workspace: 'batch', name: 'k', permissions: 'read,write' });
    let api = await start(setup.env);
    const ids = await uploadAll(api.url, key, notes());
    // Let the stages get going, so batches are half applied (some versions completed, chunks of
    // others written but not served, offsets not all committed), then kill without a shutdown path.
    await waitForDocument(api.url, key, ids[0] as string, ['processing', 'completed', 'failed'], 120_000);
    await stopChild(api, 'SIGKILL');
    api = await start(setup.env);
    await expectCompletedOnce(setup, api.url, key, ids);
  });

  it('SIGTERM in the middle of batches exits cleanly; the rest is delivered again after a restart', async () => {
    const setup = distributedEnv();
    setups.push(setup);
    const { key } = await createKey(setup.env, { workspace: 'batch', name: 't', permissions: 'read,write' });
    let api = await start(setup.env);
    const ids = await uploadAll(api.url, key, notes());
    await waitForDocument(api.url, key, ids[0] as string, ['processing', 'completed', 'failed'], 120_000);
    await stopChild(api, 'SIGTERM');
    expect(api.process.exitCode).toBe(0);
    api = await start(setup.env);
    await expectCompletedOnce(setup, api.url, key, ids);
  });
});
