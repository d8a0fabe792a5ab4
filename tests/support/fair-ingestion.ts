import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import { type CohereFake, startCohereFake } from '../../support/cohere-fake.ts';
import { LEDGER_CHUNKING, ledgerText } from './ledger-text.ts';
import { startTestService, type TestService } from './test-service.ts';

/**
 * Scheduling through the API, with the Cohere provider against a local fake that answers every
 * document batch 250 ms late (a slow provider, so the large document's embedding takes tens of
 * seconds): a large document does not hold up small ones, progress shows while a version
 * processes, and deleting, purging or replacing a version stops its embedding at the next batch.
 * Run on the embedded runtime (tests/e2e) and on the native engines (tests/integration).
 */

const LATENCY_MS = 250;
const BATCH = 32;
/**
 * The scheduling promises on one runtime: `runtimeEnv` gives the runtime's variables (nothing for
 * the embedded runtime, the engines' for the distributed one), `smallBoundMs` how long a small
 * document may take from upload to completed (a constant of the runtime: its per-stage overhead
 * and one turn of the large document, never the large document's size), and `cleanup` removes
 * what the run left on the engines.
 */
export function describeFairIngestion(
  runtimeEnv: () => Record<string, string>,
  smallBoundMs: number,
  cleanup: () => Promise<void> = async () => {},
): void {
  let fake: CohereFake;
  let svc: TestService;

  beforeAll(async () => {
    fake = await startCohereFake();
    svc = await startTestService({
      env: {
        ...runtimeEnv(),
        ...LEDGER_CHUNKING,
        KB_EMBEDDING_PROVIDER: 'cohere',
        KB_COHERE_API_KEY: fake.token,
        KB_COHERE_BASE_URL: fake.url,
        KB_EMBEDDING_BATCH_SIZE: String(BATCH),
        KB_EMBED_SLICE_CHUNKS: '128',
        KB_PARSE_THREADS: '2',
      },
    });
    fake.setLatency(LATENCY_MS);
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    await cleanup();
  });

  /** Texts of document `tag` the provider has answered so far. */
  const embeddedOf = (tag: string): number =>
    fake.calls.reduce((n, call) => n + call.texts.filter((t) => t.includes(`Ledger ${tag} `)).length, 0);

  async function get(id: string, key?: string): Promise<DocumentView> {
    const res = await svc.request<DocumentView>('GET', `/api/v1/documents/${id}`, key ? { key } : {});
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  /** Polls until the document is embedding and has at least `done` chunks embedded; returns that view. */
  async function waitForEmbedding(id: string, done: number): Promise<DocumentView> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const doc = await get(id);
      if (doc.progress?.stage === 'embed' && doc.progress.chunks_done >= done) return doc;
      if (doc.status === 'completed' || doc.status === 'failed') throw new Error(`document ended ${doc.status}`);
      if (Date.now() > deadline) throw new Error(`no embedding progress: ${JSON.stringify(doc.progress)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until the provider has had no call for `quietMs`. */
  async function untilQuiet(quietMs: number): Promise<void> {
    let seen = fake.calls.length;
    let since = Date.now();
    while (Date.now() - since < quietMs) {
      await new Promise((r) => setTimeout(r, 100));
      if (fake.calls.length !== seen) {
        seen = fake.calls.length;
        since = Date.now();
      }
    }
  }

  describe('progress', () => {
    it('shows stage, chunks done and chunks total while a version processes, and nothing once it completed', async () => {
      const res = await svc.upload('progress.txt', ledgerText('progress', 400));
      expect(res.status, res.text).toBe(201);
      const id = res.body.document_id as string;
      const during = await waitForEmbedding(id, BATCH);
      expect(during.status).toBe('processing');
      expect(during.progress).toEqual({ stage: 'embed', chunks_done: expect.any(Number), chunks_total: 400 });
      expect(during.progress?.chunks_done).toBeLessThan(400);
      const later = await waitForEmbedding(id, (during.progress?.chunks_done ?? 0) + BATCH);
      expect(later.progress?.chunks_done).toBeGreaterThan(during.progress?.chunks_done ?? 0);
      const done = await svc.waitForStatus(id, 'completed', { timeoutMs: 60_000 });
      expect(done.progress).toBeUndefined();
      expect(done.stats.chunks).toBe(400);
    }, 90_000);
  });

  describe('cancellation', () => {
    it.each([
      ['deleted', ''],
      ['purged', '?purge=true'],
    ])(
      'stops embedding a document %s mid-way at the next batch',
      async (label, query) => {
        const tag = `cancel-${label}`;
        const res = await svc.upload(`${tag}.txt`, ledgerText(tag, 600));
        expect(res.status, res.text).toBe(201);
        const id = res.body.document_id as string;
        await waitForEmbedding(id, BATCH);
        const del = await svc.request('DELETE', `/api/v1/documents/${id}${query}`);
        expect(del.status).toBe(204);
        const atDelete = embeddedOf(tag);
        await untilQuiet(1500);
        // At most the batch that was already with the provider, never the remaining hundreds.
        expect(embeddedOf(tag) - atDelete).toBeLessThanOrEqual(BATCH);
        expect(embeddedOf(tag)).toBeLessThan(600);
      },
      90_000,
    );

    it('stops embedding a version replaced by a newer one, marks it superseded and completes the new one', async () => {
      const tag = 'cancel-replaced';
      const res = await svc.upload(`${tag}.txt`, ledgerText(tag, 600));
      expect(res.status, res.text).toBe(201);
      const id = res.body.document_id as string;
      await waitForEmbedding(id, BATCH);
      const put = await svc.upload(`${tag}.txt`, 'The replacement says only that the depot closed.', {
        documentId: id,
      });
      expect(put.status, put.text).toBe(200);
      const atReplace = embeddedOf(tag);
      const current = await svc.waitForStatus(id, 'completed', { timeoutMs: 30_000 });
      expect(current.version).toBe(2);
      expect(current.stats.chunks).toBe(1);
      await untilQuiet(1500);
      expect(embeddedOf(tag) - atReplace).toBeLessThanOrEqual(BATCH);
      const first = await svc.request('GET', `/api/v1/documents/${id}/versions/1`);
      expect(first.status).toBe(200);
      expect(first.body.status).toBe('failed');
      expect(first.body.error).toMatchObject({ code: 'superseded', stage: 'embed' });
    }, 90_000);
  });

  describe('fairness', () => {
    it('completes small documents of another workspace without waiting for a large one uploaded before them', async () => {
      const big = await svc.upload('big.txt', ledgerText('big', 3000));
      expect(big.status, big.text).toBe(201);
      const bigId = big.body.document_id as string;
      const started = Date.now();
      const small: Array<{ id: string; uploadedAt: number }> = [];
      for (let i = 0; i < 20; i++) {
        const res = await svc.upload(`small-${i}.txt`, `Small note ${i} about a quiet harbour.`, {
          key: svc.keys.otherWorkspace,
        });
        expect(res.status, res.text).toBe(201);
        small.push({ id: res.body.document_id, uploadedAt: Date.now() });
      }
      // The large document alone needs 94 provider calls of 250 ms: well over 20 s one after another.
      // A small one needs one call; it may wait for a turn of the large one (128 chunks), not for all of it.
      const BOUND_MS = smallBoundMs;
      const waits: number[] = [];
      for (const { id, uploadedAt } of small) {
        await svc.waitForStatus(id, 'completed', { timeoutMs: 60_000, key: svc.keys.otherWorkspace });
        waits.push(Date.now() - uploadedAt);
      }
      const bigNow = await get(bigId);
      console.info(
        `fairness: slowest small document ${Math.max(...waits)} ms after its upload; ` +
          `the large one is ${bigNow.status} at ${bigNow.progress?.chunks_done ?? bigNow.stats.chunks}/3000 after ${Date.now() - started} ms`,
      );
      expect(Math.max(...waits)).toBeLessThan(BOUND_MS);
      expect(bigNow.status).toBe('processing');
    }, 120_000);
  });
}
