/**
 * `ingest, embedding server`: the pipeline with the `openai` provider talking HTTP to a loopback
 * fake of the OpenAI embeddings API in a process of its own that answers at once (fixed vectors
 * serialised once, so the fake costs next to nothing; bench/peers/openai-embeddings.server.ts): the
 * documents/s and chunks/s the service itself can feed an embedding server, with the provider's
 * requests, JSON and vector checks in the path. A real server is slower; this is the ceiling it
 * would meet.
 */
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { createOpenAiEmbeddingProvider } from '../../core/ports/embedding/openai.adapter.ts';
import { sizeLabel } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { startPeerServer } from '../lib/peer-server.ts';
import { addFigure, createRow, type Row } from '../lib/report.ts';
import type { Target } from '../lib/target.ts';
import { type IngestRun, ingestOnce } from './ingest.scenario.ts';

/** `provider`, counting the texts handed to it and the requests they make at `batchSize` a request. */
function counting(provider: EmbeddingProvider, batchSize: number) {
  const counts = { texts: 0, requests: 0 };
  const wrapped: EmbeddingProvider = {
    ...provider,
    async embedDocuments(texts) {
      counts.texts += texts.length;
      counts.requests += Math.ceil(texts.length / batchSize);
      return provider.embedDocuments(texts);
    },
    embedQuery: (text) => provider.embedQuery(text),
    close: () => provider.close(),
  };
  return { provider: wrapped, counts };
}

export async function ingestEmbeddingServer(
  ctx: BenchContext,
  target: Target,
  size: number,
  concurrency: number,
): Promise<Row> {
  const count = Math.min(size, ctx.corpus.files.length);
  const row = createRow('ingest, embedding server', target.runtime, `${sizeLabel(count)} docs`);
  const server = await startPeerServer('bench/peers/openai-embeddings.server.ts');
  const runs: Array<{ run: IngestRun; requests: number; texts: number }> = [];
  try {
    for (let round = 0; round < ctx.options.rounds; round++) {
      ctx.progress(`ingest, embedding server (${target.runtime}): round ${round + 1}, ${count} documents`);
      const { provider, counts } = counting(
        await createOpenAiEmbeddingProvider({
          url: `${server.url}/v1`,
          model: 'fake-embed',
          batchSize: ctx.batchSize,
          concurrency,
          policy: { allowPrivate: true },
        }),
        ctx.batchSize,
      );
      try {
        const run = await ingestOnce(ctx, target, count, provider);
        runs.push({ run, requests: counts.requests, texts: counts.texts });
        if (run.failed > 0 || run.problems.length > 0) {
          row.notes.push(`${run.failed} document(s) failed: ${run.problems.join(' | ')}`);
        }
      } finally {
        await provider.close();
      }
    }
  } finally {
    await server.stop();
  }
  addFigure(
    row,
    'documents',
    'docs/s',
    runs.map(({ run }) => run.documents / run.seconds),
  );
  addFigure(
    row,
    'chunks indexed',
    'chunks/s',
    runs.map(({ run }) => run.chunks / run.seconds),
  );
  addFigure(
    row,
    'texts embedded by the server',
    'texts/s',
    runs.map(({ run, texts }) => texts / run.seconds),
  );
  addFigure(
    row,
    'embed stage handler time',
    'ms/doc',
    runs.map(({ run }) => (run.busyMs.embed ?? 0) / Math.max(1, run.documents)),
  );
  const last = runs.at(-1);
  if (last) {
    row.notes.push(
      `openai provider against a loopback fake in its own process that answers at once (384 dimensions): ${last.requests} requests of at most ` +
        `${ctx.batchSize} texts (KB_EMBEDDING_BATCH_SIZE), ${concurrency} in flight (KB_EMBEDDING_CONCURRENCY), in the last round`,
    );
  }
  return row;
}

/**
 * Adds to each embedding-server row its documents/s ÷ the pipeline-overhead row's (the same
 * runtime and corpus, a provider that answers from memory) measured earlier in the same run:
 * how close HTTP to an embedding server that answers at once comes to no embedding cost at all.
 */
export function compareEmbeddingServer(rows: Row[]): void {
  const documents = (row: Row | undefined) => row?.figures.find((f) => f.name === 'documents')?.values ?? [];
  for (const row of rows) {
    if (row.scenario !== 'ingest, embedding server') continue;
    const overhead = documents(
      rows.find((r) => r.scenario === 'ingest, pipeline overhead' && r.runtime === row.runtime && r.size === row.size),
    );
    const server = documents(row);
    if (overhead.length === 0 || server.length === 0) continue;
    addFigure(
      row,
      'documents ÷ pipeline overhead row (same run)',
      'ratio',
      server.map((value, i) => value / (overhead[i % overhead.length] as number)),
    );
  }
}
