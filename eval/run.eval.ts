/**
 * `npm run eval -- --beir <folder> [--split test]`: retrieval quality of the service on a collection
 * in the BEIR layout, measured through the public API, next to two baselines computed in the same
 * run outside the service: BM25 over whole documents and the embedding model alone (each document
 * embedded whole, exact cosine). Prints nDCG@10, Recall@100 and query latency per mode.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbeddingProvider } from '../core/runtime/create-embedding-provider.ts';
import { type BeirSet, documentText, readBeir } from './lib/beir.ts';
import { createBm25 } from './lib/bm25.ts';
import { firstOccurrences, mean, ndcgAt, percentile, recallAt } from './lib/metrics.ts';
import { type EvalService, startEvalService } from './lib/service-target.ts';

const USAGE = `Usage: npm run eval -- --beir <folder> [options]

Ingests a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) into a fresh embedded
service through its HTTP API, runs every judged query in each mode and prints nDCG@10, Recall@100 and
query latency, next to BM25 and the embedding model alone measured in the same run. The embedding
model is the configured one (KB_EMBEDDING_PROVIDER, KB_TRANSFORMERS_MODEL, ...).

Options:
  --beir <folder>       the collection (required)
  --split <name>        qrels split (default: test, else train when there is no test split)
  --modes <list>        service modes, comma-separated (default: hybrid,semantic,keyword)
  --limit-queries <n>   only the first n judged queries
  --concurrency <n>     uploads in flight (default 8)
  --no-dense            skip the dense baseline (it embeds the corpus a second time)
  --weights <k,s;...>   hybrid weights sent with each request, e.g. 0.5,0.5 (default: the service's);
                        several sets separated by ';' give one hybrid row each (a sweep)
  --json <file>         also write the results as JSON
  --data-dir <dir>      keep the service's data there; a later run with the same folder and
                        collection skips ingestion (to compare settings quickly)
  -h, --help            this text
`;

type Mode = 'hybrid' | 'semantic' | 'keyword';

interface Row {
  readonly name: string;
  readonly ndcg10: number;
  readonly recall100: number;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
}

function score(set: BeirSet, rankings: Map<string, string[]>, name: string, latencies: number[] | null): Row {
  const ndcg: number[] = [];
  const recall: number[] = [];
  for (const query of set.queries) {
    const judged = set.qrels.get(query.id) ?? new Map<string, number>();
    const ranking = rankings.get(query.id) ?? [];
    ndcg.push(ndcgAt(10, ranking, judged));
    recall.push(recallAt(100, ranking, judged));
  }
  return {
    name,
    ndcg10: mean(ndcg),
    recall100: mean(recall),
    p50Ms: latencies ? percentile(latencies, 50) : null,
    p95Ms: latencies ? percentile(latencies, 95) : null,
  };
}

/** Reciprocal-rank fusion of document rankings (k 60), best first. */
function reciprocalRankFusion(rankings: ReadonlyArray<readonly string[]>): string[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, rank) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (60 + rank + 1));
    });
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([id]) => id);
}

async function ingest(service: EvalService, set: BeirSet, concurrency: number): Promise<Map<string, string>> {
  const beirIdOf = new Map<string, string>();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < set.corpus.length) {
      const doc = set.corpus[next++];
      if (!doc) break;
      const id = await service.upload(`${doc.id}.txt`, documentText(doc), { beir_id: doc.id });
      beirIdOf.set(id, doc.id);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  process.stderr.write(
    `uploaded ${set.corpus.length} documents in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  for (;;) {
    const { completed, failed } = await service.counts();
    const elapsed = (performance.now() - started) / 1000;
    process.stderr.write(
      `\ringested ${completed}/${set.corpus.length} (${failed} failed), ${(completed / elapsed).toFixed(1)} docs/s   `,
    );
    if (completed + failed >= set.corpus.length) break;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  process.stderr.write('\n');
  return beirIdOf;
}

function table(rows: readonly Row[], ingestDocsPerSecond: number, set: BeirSet): string {
  const lines = [
    `${set.queries.length} queries, ${set.corpus.length} documents, ingest ${Number.isNaN(ingestDocsPerSecond) ? 'skipped (documents kept from an earlier run)' : `${ingestDocsPerSecond.toFixed(1)} docs/s`}`,
    '',
    '| Ranking | nDCG@10 | Recall@100 | query p50 | query p95 |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.ndcg10.toFixed(3)} | ${r.recall100.toFixed(3)} | ${r.p50Ms === null ? '–' : `${r.p50Ms.toFixed(1)} ms`} | ${r.p95Ms === null ? '–' : `${r.p95Ms.toFixed(1)} ms`} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      beir: { type: 'string' },
      split: { type: 'string' },
      modes: { type: 'string', default: 'hybrid,semantic,keyword' },
      'limit-queries': { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      'no-dense': { type: 'boolean', default: false },
      weights: { type: 'string' },
      json: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.beir) {
    process.stderr.write(`--beir <folder> is required\n\n${USAGE}`);
    return 2;
  }
  const modes = values.modes.split(',').map((m) => m.trim()) as Mode[];
  const bad = modes.filter((m) => !['hybrid', 'semantic', 'keyword'].includes(m));
  if (bad.length > 0) throw new Error(`Unknown mode ${bad.join(', ')}; modes are hybrid, semantic, keyword`);
  const weightSets: Array<{ keyword: number; semantic: number } | undefined> = values.weights
    ? values.weights.split(';').map((pair) => {
        const [k, s] = pair.split(',').map(Number);
        if (!(k !== undefined && s !== undefined && k >= 0 && s >= 0 && k + s > 0)) {
          throw new Error(`--weights takes k,s pairs separated by ';', got "${pair}"`);
        }
        return { keyword: k, semantic: s };
      })
    : [undefined];
  const split =
    values.split ??
    (await readBeir(values.beir, 'test')
      .then(() => 'test')
      .catch(() => 'train'));
  const full = await readBeir(values.beir, split);
  const limit = values['limit-queries'] ? Number(values['limit-queries']) : full.queries.length;
  const set: BeirSet = { ...full, queries: full.queries.slice(0, limit) };
  process.stderr.write(`${values.beir} (${split}): ${set.corpus.length} documents, ${set.queries.length} queries\n`);

  const rows: Row[] = [];
  const bm25 = createBm25(set.corpus.map((d) => ({ id: d.id, text: documentText(d) })));
  const bm25Rankings = new Map(set.queries.map((q) => [q.id, bm25.search(q.text, 100)]));
  rows.push(score(set, bm25Rankings, 'baseline: BM25 (whole documents, k1 0.9, b 0.4)', null));

  const service = await startEvalService(values['data-dir'] ? path.resolve(values['data-dir']) : null);
  try {
    const started = performance.now();
    const kept = await service.listBeirIds();
    const reuse = kept.size === set.corpus.length;
    if (kept.size > 0 && !reuse)
      throw new Error(`${values['data-dir']} holds ${kept.size} documents, not this collection`);
    const beirIdOf = reuse ? kept : await ingest(service, set, Number(values.concurrency));
    const docsPerSecond = reuse ? Number.NaN : set.corpus.length / ((performance.now() - started) / 1000);
    if (reuse) process.stderr.write(`reusing the ${kept.size} documents ingested in ${values['data-dir']}\n`);

    if (!values['no-dense']) {
      const provider = await createEmbeddingProvider(service.config.embedding, service.config.outbound);
      try {
        const vectors: Float32Array[] = [];
        const texts = set.corpus.map(documentText);
        for (let i = 0; i < texts.length; i += 256) {
          vectors.push(...(await provider.embedDocuments(texts.slice(i, i + 256))));
          process.stderr.write(`\rdense baseline: embedded ${vectors.length}/${texts.length} documents   `);
        }
        process.stderr.write('\n');
        const rankings = new Map<string, string[]>();
        for (const q of set.queries) {
          const qv = await provider.embedQuery(q.text);
          const scored = vectors.map((v, i) => {
            let dot = 0;
            for (let d = 0; d < v.length; d += 1) dot += (v[d] as number) * (qv[d] as number);
            return [dot, i] as const;
          });
          scored.sort((a, b) => b[0] - a[0]);
          rankings.set(
            q.id,
            scored.slice(0, 100).map(([, i]) => (set.corpus[i] as { id: string }).id),
          );
        }
        rows.push(score(set, rankings, `baseline: ${provider.model} alone (whole documents, exact)`, null));
      } finally {
        await provider.close();
      }
    }

    const byMode = new Map<string, Map<string, string[]>>();
    type Run = { mode: Mode; weights: { keyword: number; semantic: number } | undefined };
    const runs = modes.flatMap((mode): Run[] =>
      mode === 'hybrid' ? weightSets.map((weights) => ({ mode, weights })) : [{ mode, weights: undefined }],
    );
    for (const { mode, weights } of runs) {
      const rankings = new Map<string, string[]>();
      const latencies: number[] = [];
      for (const [n, q] of set.queries.entries()) {
        if (n % 50 === 0) process.stderr.write(`\rservice ${mode}: query ${n + 1}/${set.queries.length}   `);
        const { documentIds, ms } = await service.search(q.text, { mode, limit: 100, ...(weights ? { weights } : {}) });
        latencies.push(ms);
        rankings.set(q.id, firstOccurrences(documentIds.map((id) => beirIdOf.get(id) ?? id)));
      }
      const label = weights ? `${mode} (keyword ${weights.keyword}, semantic ${weights.semantic})` : mode;
      rows.push(score(set, rankings, `service: ${label}`, latencies));
      if (!weights) byMode.set(mode, rankings);
    }
    const keywordRanks = byMode.get('keyword');
    const semanticRanks = byMode.get('semantic');
    if (keywordRanks && semanticRanks) {
      // What reciprocal-rank fusion (k 60) of the same two rankings would give, for comparison.
      const fused = new Map(
        set.queries.map((q) => [
          q.id,
          reciprocalRankFusion([keywordRanks.get(q.id) ?? [], semanticRanks.get(q.id) ?? []]),
        ]),
      );
      rows.push(score(set, fused, 'comparison: reciprocal-rank fusion (k 60) of the keyword and semantic rows', null));
    }
    const text = table(rows, docsPerSecond, set);
    process.stdout.write(`\n${text}`);
    if (values.json) {
      await writeFile(
        values.json,
        JSON.stringify(
          {
            collection: values.beir,
            split,
            queries: set.queries.length,
            documents: set.corpus.length,
            docsPerSecond,
            rows,
          },
          null,
          2,
        ),
      );
    }
  } finally {
    await service.close();
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`eval: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
