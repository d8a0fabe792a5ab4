/**
 * What the backup rows share: a knowledge base written straight through the ports (synthetic
 * chunks with vectors, each document's file and parsed text), a search client, and the restored
 * service's own count of embedding calls.
 */
import { storageKeys } from '../../core/util/storage-keys.ts';
import type { BenchContext } from './context.ts';
import { createJsonClient, openInstance } from './service.ts';
import { baseVectors, writeSyntheticChunks } from './synthetic.ts';
import type { Instance } from './target.ts';
import { zipfVocabulary } from './zipf-corpus.ts';

const PER_DOCUMENT = 100;
/** The bearer token of the restored service's `/metrics` (its `KB_METRICS_TOKEN`). */
export const METRICS_TOKEN = 'bench-backup-metrics';
/** Bound on each command: a backup or restore of a million chunks on two busy cores. */
export const COMMAND_TIMEOUT_MS = 60 * 60_000;
/** Chunks in each document of the knowledge base. */
export const CHUNKS_PER_DOCUMENT = PER_DOCUMENT;

export const seconds = (started: number) => (performance.now() - started) / 1000;

/** Writes the knowledge base into `instance`; returns the workspace and a key to search it with. */
export async function buildKnowledgeBase(
  ctx: BenchContext,
  instance: Instance,
  chunks: number,
  queryTerms: readonly (readonly number[])[],
): Promise<{ workspaceId: string; key: string }> {
  const service = await openInstance(instance, { embeddings: ctx.provider, keys: 1 });
  try {
    const { documents, objects } = service.runtime.ports;
    const base = await baseVectors(ctx.provider, ctx.vectors.values(), 64, ctx.options.seed);
    let reported = 0;
    const data = await writeSyntheticChunks(documents, {
      workspaceId: service.workspaceId,
      chunks,
      perDocument: PER_DOCUMENT,
      writers: 4,
      model: ctx.provider,
      base,
      seed: ctx.options.seed,
      text: { vocabulary: zipfVocabulary(ctx.options.seed), queries: queryTerms },
      onProgress: (written) => {
        if (written - reported >= 25_000) {
          reported = written;
          ctx.progress(`backup: ${written} chunks written`);
        }
      },
    });
    // Each document's file and parsed text: what a backup copies beside the records.
    const ids = [...new Set(data.ids.map((id) => id.slice(0, id.indexOf(':'))))];
    for (const documentId of ids) {
      const { chunks: page } = await documents.listChunks(documentId, 1, { afterIndex: -1, limit: PER_DOCUMENT });
      const text = Buffer.from(page.map((c) => c.content).join('\n\n'), 'utf8');
      await objects.put(`bench/synthetic/${documentId}`, text);
      await objects.put(storageKeys.parsed(service.workspaceId, documentId, 1), text);
    }
    // The vector index is built and saved here, as the search row does: kb serve loads it.
    const vector = await ctx.provider.embedQuery('backup bench warm-up');
    await documents.vectorSearch({
      workspaceId: service.workspaceId,
      text: '',
      vector,
      limit: 10,
      asOf: null,
      filters: {},
    });
    return { workspaceId: service.workspaceId, key: service.keys[0] as string };
  } finally {
    await service.close();
  }
}

/** One client's searches, one at a time, over `queries` in turn until `until` settles (or `count` were sent). */
export async function searchLoop(
  url: string,
  key: string,
  queries: readonly string[],
  stop: { until?: Promise<unknown>; count?: number },
): Promise<number[]> {
  const http = createJsonClient(1);
  const durations: number[] = [];
  let done = false;
  stop.until?.then(
    () => (done = true),
    () => (done = true),
  );
  try {
    for (let i = 0; !done && (stop.count === undefined || i < stop.count); i++) {
      const started = performance.now();
      const response = await http.post(
        `${url}/api/v1/search`,
        { query: queries[i % queries.length], limit: 10 },
        { 'x-api-key': key },
      );
      if (response.status !== 200)
        throw new Error(`search answered ${response.status}: ${response.body.slice(0, 300)}`);
      durations.push(performance.now() - started);
    }
  } finally {
    http.close();
  }
  return durations;
}

/** Polls a search until the service answers 200; the seconds it took from `started`. */
export async function firstAnswer(url: string, key: string, query: string, started: number): Promise<number> {
  const http = createJsonClient(1);
  try {
    for (;;) {
      const response = await http.post(`${url}/api/v1/search`, { query, limit: 10 }, { 'x-api-key': key });
      if (response.status === 200) return seconds(started);
      if (seconds(started) > COMMAND_TIMEOUT_MS / 1000) {
        throw new Error(`the restored service never answered a search: ${response.status} ${response.body}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    http.close();
  }
}

/** Calls to the embedding provider with chunks so far, from the service's own `/metrics`. */
export async function embeddingCalls(url: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  const line = text.split('\n').find((l) => l.startsWith('kb_embedding_batch_size_count'));
  if (line === undefined) throw new Error('/metrics has no kb_embedding_batch_size_count');
  return Number(line.split(' ').at(-1));
}
