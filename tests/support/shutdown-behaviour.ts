import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChildService,
  createKey,
  startChild,
  stopChild,
  tempDir,
  waitForDocument,
} from '../../support/child-service.ts';
import { type CohereFake, startCohereFake } from '../../support/cohere-fake.ts';
import { LEDGER_CHUNKING, ledgerText } from './ledger-text.ts';

/**
 * `kb serve` stopped by a signal while a large document is embedding, with the Cohere provider
 * against a local fake that answers each batch late: the first signal stops at the next batch
 * boundary and exits, the rest is redelivered after a restart; the grace period bounds the exit
 * when a provider call hangs; a second signal exits at once. Each says so. Run on the embedded
 * runtime (tests/e2e) and on the native engines (tests/integration).
 */

const BATCH = 32;

interface Started {
  service: ChildService;
  env: Record<string, string>;
  key: string;
}

/**
 * The shutdown promises on one runtime: `runtimeEnv` gives the runtime's variables (nothing for
 * the embedded runtime, the engines' for the distributed one; called once per service, a restart
 * reuses them) and `cleanup` removes what the run left on the engines.
 */
export function describeShutdown(
  runtimeEnv: () => Record<string, string>,
  cleanup: () => Promise<void> = async () => {},
): void {
  let fake: CohereFake;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    fake = await startCohereFake();
  });

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await fake?.close();
    await cleanup();
  });

  const embeddedOf = (tag: string): number =>
    fake.calls.reduce((n, call) => n + call.texts.filter((t) => t.includes(`Ledger ${tag} `)).length, 0);

  async function serve(extra: Record<string, string> = {}, previous?: Started): Promise<Started> {
    if (previous) {
      const service = await startChild(['serve', '--stages', 'all'], previous.env, { timeoutMs: 120_000 });
      cleanups.push(() => stopChild(service, 'SIGKILL'));
      return { ...previous, service };
    }
    const data = await tempDir('kb-shutdown-');
    cleanups.push(data.remove);
    const env = {
      ...runtimeEnv(),
      ...LEDGER_CHUNKING,
      KB_DATA_DIR: data.path,
      KB_BOOTSTRAP_KEY: 'false',
      KB_OCR: 'false',
      KB_EMBEDDING_PROVIDER: 'cohere',
      KB_COHERE_API_KEY: fake.token,
      KB_COHERE_BASE_URL: fake.url,
      KB_EMBEDDING_BATCH_SIZE: String(BATCH),
      ...extra,
    };
    const created = await createKey(env, {
      workspace: 'stop',
      name: 'e2e',
      permissions: 'read,write',
      plan: 'enterprise',
    });
    const service = await startChild(['serve', '--stages', 'all'], env, { timeoutMs: 120_000 });
    cleanups.push(() => stopChild(service, 'SIGKILL'));
    return { service, env, key: created.key };
  }

  async function upload(s: Started, tag: string, entries: number): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([ledgerText(tag, entries)], { type: 'text/plain' }), `${tag}.txt`);
    const res = await fetch(`${s.service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': s.key },
      body: form,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { document_id: string }).document_id;
  }

  async function waitForEmbedding(s: Started, id: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(`${s.service.url}/api/v1/documents/${id}`, { headers: { 'X-API-Key': s.key } });
      const doc = (await res.json()) as { status: string; progress?: { stage: string; chunks_done: number } };
      if (doc.progress?.stage === 'embed' && doc.progress.chunks_done >= BATCH) return;
      if (doc.status === 'completed' || doc.status === 'failed' || Date.now() > deadline) {
        throw new Error(`no embedding progress seen before the document was ${doc.status}: ${JSON.stringify(doc)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sends `signal` and resolves with the exit code and how long the exit took. */
  async function signalAndTime(s: Started, signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }> {
    const started = Date.now();
    s.service.process.kill(signal);
    const code = await s.service.exited;
    return { code, ms: Date.now() - started };
  }

  describe('shutdown during a long embedding', () => {
    it('stops at the next batch on SIGTERM, exits, and finishes the document after a restart', async () => {
      fake.setLatency(300);
      const s = await serve();
      const id = await upload(s, 'stop', 1500);
      await waitForEmbedding(s, id);
      const atSignal = embeddedOf('stop');
      const { code, ms } = await signalAndTime(s, 'SIGTERM');
      // 1,500 chunks are 47 batches of 300 ms: waiting for all of them would take 14 s.
      expect(ms).toBeLessThan(5000);
      expect(code).toBe(0);
      expect(s.service.output()).toMatch(/stopping ingestion at its next batch boundary/);
      expect(embeddedOf('stop') - atSignal).toBeLessThanOrEqual(BATCH);
      expect(embeddedOf('stop')).toBeLessThan(1500);

      fake.setLatency(0);
      const again = await serve({}, s);
      const doc = await waitForDocument(again.service.url, s.key, id, ['completed', 'failed'], 120_000);
      expect(doc.status).toBe('completed');
      expect((doc.stats as { chunks: number }).chunks).toBe(1500);
      await stopChild(again.service);
    }, 180_000);

    it('exits when the grace period is over even though a provider call still hangs, and says so', async () => {
      fake.setLatency(300);
      const s = await serve({ KB_SHUTDOWN_GRACE_MS: '2000' });
      const id = await upload(s, 'grace', 3000);
      await waitForEmbedding(s, id);
      fake.setLatency(30_000);
      await new Promise((r) => setTimeout(r, 700)); // the next batch is now with the provider
      const { code, ms } = await signalAndTime(s, 'SIGTERM');
      expect(ms).toBeGreaterThanOrEqual(1500);
      expect(ms).toBeLessThan(8000);
      expect(code).toBe(1);
      expect(s.service.output()).toMatch(/did not finish within 2000 ms; exiting now/);
    }, 120_000);

    it('exits at once on a second signal, and says so', async () => {
      fake.setLatency(300);
      const s = await serve();
      const id = await upload(s, 'twice', 3000);
      await waitForEmbedding(s, id);
      fake.setLatency(30_000);
      await new Promise((r) => setTimeout(r, 700));
      const started = Date.now();
      s.service.process.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      s.service.process.kill('SIGTERM');
      const code = await s.service.exited;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(code).toBe(130);
      expect(s.service.output()).toMatch(/Received SIGTERM again during shutdown .*exiting at once/);
    }, 120_000);
  });
}
