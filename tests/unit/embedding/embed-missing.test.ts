import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embedMissing } from '../../../core/embedding/embed-missing.ts';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../../core/ports/document-store/sqlite.adapter.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import { createFairGate } from '../../../core/util/fair-gate.ts';

/** A provider that records the texts it is asked for (the cache and the gate are what is tested). */
function recordingProvider(): EmbeddingProvider & { texts: string[] } {
  const texts: string[] = [];
  return {
    provider: 'recording',
    model: 'recording-3d',
    dimensions: 3,
    texts,
    async embedDocuments(batch) {
      texts.push(...batch);
      return batch.map((_, i) => new Float32Array([1, i, 0]));
    },
    async embedQuery() {
      return new Float32Array([1, 0, 0]);
    },
    async close() {},
  };
}

const chunk = (n: number) => ({ content: `text ${n}`, contentHash: `hash-${n}` });

let dir: string;
let documents: DocumentStore;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-embed-missing-'));
  documents = createSqliteDocumentStore({ file: path.join(dir, 'documents.db') });
});
afterEach(async () => {
  await documents.close();
  await rm(dir, { recursive: true, force: true });
});

describe('embedMissing', () => {
  it('embeds only what the cache lacks, and a second pass finds everything cached', async () => {
    const provider = recordingProvider();
    const chunks = [chunk(1), chunk(2), chunk(2), chunk(3)];
    const first = await embedMissing(documents, provider, chunks, 2);
    expect(first).toMatchObject({ embedded: 3, cached: 0, remaining: 0 });
    expect(provider.texts).toEqual(['text 1', 'text 2', 'text 3']);
    const second = await embedMissing(documents, provider, chunks, 2);
    expect(second).toMatchObject({ embedded: 0, cached: 3 });
    expect(provider.texts).toHaveLength(3);
  });

  it('takes the cache as the caller read it, caches what it embeds and reports progress with each batch', async () => {
    const provider = recordingProvider();
    const chunks = [chunk(1), chunk(2), chunk(3)];
    await embedMissing(documents, provider, [chunk(1)], 2);
    const read = await documents.getCachedVectors(provider.model, ['hash-1', 'hash-2', 'hash-3']);
    const progress: number[] = [];
    const result = await embedMissing(documents, provider, chunks, 1, {
      cachedVectors: read,
      afterBatch: async (done) => {
        progress.push(done);
      },
    });
    expect(result).toMatchObject({ embedded: 2, cached: 1, remaining: 0 });
    expect(provider.texts).toEqual(['text 1', 'text 2', 'text 3']);
    expect(progress).toEqual([2, 3]);
    const after = await documents.getCachedVectors(provider.model, ['hash-1', 'hash-2', 'hash-3']);
    expect(after.size).toBe(3);
  });

  it('ends a turn after the batch that runs past its time, leaving the rest for the next turn', async () => {
    const provider = recordingProvider();
    const chunks = Array.from({ length: 10 }, (_, i) => chunk(i));
    const first = await embedMissing(documents, provider, chunks, 2, { yieldAfterMs: 0 });
    expect(first).toMatchObject({ embedded: 2, remaining: 8 });
    const rest = await embedMissing(documents, provider, chunks, 2, { yieldAfterMs: 60_000 });
    expect(rest).toMatchObject({ embedded: 8, cached: 2, remaining: 0 });
    expect(provider.texts).toHaveLength(10);
  });

  it('checks for a stop only once a batch has its turn, so a stop while waiting sends nothing more', async () => {
    const provider = recordingProvider();
    const gate = createFairGate({ slots: 1 });
    let release: () => void = () => {};
    const held = gate.run('other', () => new Promise<void>((resolve) => (release = resolve)));
    let stopped = false;
    const pending = embedMissing(documents, provider, [chunk(1), chunk(2), chunk(3)], 1, {
      aroundCall: (call) => gate.run('mine', call),
      beforeBatch: async () => {
        if (stopped) throw new Error('stopping');
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gate.waiting).toBe(1);
    stopped = true;
    release();
    await held;
    await expect(pending).rejects.toThrow('stopping');
    expect(provider.texts).toEqual([]);
  });
});
