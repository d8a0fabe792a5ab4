/**
 * Moving a knowledge base from one machine onto the engines: an embedded knowledge base of
 * {@link MOVE_CHUNKS} chunks (the backup row's synthetic documents with their files), `kb backup`
 * on the embedded runtime, then `KB_RUNTIME=distributed kb restore` into fresh engines (a new topic
 * and index prefix, database and bucket) and `kb serve` on them until it answers a search.
 *
 * Reported: each command's time (child processes, their start included), the restore's time per
 * chunk, the documents the restored service lists against the source's, the overlap of the two
 * services' semantic top 10 for the same queries (two different vector indexes: not judged), and
 * the engines' floor: the same final state written straight to each engine by the bench with its
 * bulk path (`bench/lib/engine-floor.ts`, the overhead row's), in wall-clock seconds. That the
 * restore embeds nothing is checked by tests/integration/backup-restore.distributed.test.ts, which
 * counts the provider's calls; here no `kb worker` runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DistributedConfig } from '../../core/config/config.ts';
import { type ChildService, kb, startChild, stopChild } from '../../support/child-service.ts';
import { sizeLabel } from '../corpus.ts';
import { buildKnowledgeBase, COMMAND_TIMEOUT_MS, firstAnswer, seconds } from '../lib/backup-knowledge-base.ts';
import type { BenchContext } from '../lib/context.ts';
import { measureEngineFloor } from '../lib/engine-floor.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, createJsonClient } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';
import { zipfQueries, zipfVocabulary } from '../lib/zipf-corpus.ts';

/** The knowledge base moved (the 10k; 2k with --quick). */
export const MOVE_CHUNKS = 10_000;
const COMPARED_QUERIES = 20;

/** Every document id the service lists (pages of 100). */
async function listedDocuments(url: string, key: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const response = await fetch(`${url}/api/v1/documents?limit=100${query}`, { headers: { 'x-api-key': key } });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`listing answered ${response.status}: ${body.slice(0, 300)}`);
    const page = JSON.parse(body) as {
      documents: Array<{ id: string }>;
      pagination: { has_more: boolean; next_cursor: string | null };
    };
    for (const document of page.documents) ids.add(document.id);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
  } while (cursor !== null);
  return ids;
}

/** The semantic top 10 (chunk ids) of each query. */
async function semanticTops(url: string, key: string, queries: readonly string[]): Promise<string[][]> {
  const http = createJsonClient(1);
  try {
    const tops: string[][] = [];
    for (const query of queries) {
      const response = await http.post(
        `${url}/api/v1/search`,
        { query, limit: 10, mode: 'semantic' },
        { 'x-api-key': key },
      );
      if (response.status !== 200)
        throw new Error(`search answered ${response.status}: ${response.body.slice(0, 300)}`);
      tops.push(
        (JSON.parse(response.body) as { results: Array<{ chunk_id: string }> }).results.map((hit) => hit.chunk_id),
      );
    }
    return tops;
  } finally {
    http.close();
  }
}

export async function backupMoveScenario(
  ctx: BenchContext,
  embedded: Target,
  distributed: Target,
  chunks: number,
): Promise<Row> {
  const row = createRow('backup, embedded → distributed', 'distributed', `${sizeLabel(chunks)} chunks`);
  const vocabulary = zipfVocabulary(ctx.options.seed);
  const queryTerms = zipfQueries(vocabulary, ctx.options.latencyQueries, ctx.options.seed);
  const queries = queryTerms
    .map((ranks) => ranks.map((rank) => vocabulary.terms[rank]).join(' '))
    .slice(0, COMPARED_QUERIES);
  const source = await embedded.fresh();
  const work = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-move-'));
  let serving: ChildService | null = null;
  try {
    ctx.progress(`backup move: writing an embedded knowledge base of ${chunks} chunks`);
    const { key } = await buildKnowledgeBase(ctx, source, chunks, queryTerms);
    serving = await startChild(['serve', '--stages', 'none'], childEnv(source));
    await firstAnswer(serving.url, key, queries[0] as string, performance.now());
    const sourceDocuments = await listedDocuments(serving.url, key);
    const sourceTops = await semanticTops(serving.url, key, queries);
    await stopChild(serving);
    serving = null;

    const figures = {
      backup: [] as number[],
      restore: [] as number[],
      perChunk: [] as number[],
      serving: [] as number[],
      documents: [] as number[],
      missing: [] as number[],
      overlap: [] as number[],
      floor: [] as number[],
      floorRatio: [] as number[],
    };
    for (let round = 0; round < ctx.options.rounds; round++) {
      const dest = path.join(work, `backup-${round}`);
      ctx.progress(`backup move: round ${round + 1}: kb backup on the embedded runtime`);
      let started = performance.now();
      await kb(['backup', dest, '--json'], childEnv(source), COMMAND_TIMEOUT_MS);
      figures.backup.push(seconds(started));

      const restored = await distributed.fresh();
      try {
        const env = childEnv(restored);
        ctx.progress(`backup move: round ${round + 1}: KB_RUNTIME=distributed kb restore, then kb serve`);
        started = performance.now();
        await kb(['restore', dest, '--json'], env, COMMAND_TIMEOUT_MS);
        const restoreSeconds = seconds(started);
        serving = await startChild(['serve'], env, { timeoutMs: COMMAND_TIMEOUT_MS });
        const servingSeconds = await firstAnswer(serving.url, key, queries[0] as string, started);
        const documents = await listedDocuments(serving.url, key);
        const tops = await semanticTops(serving.url, key, queries);
        await stopChild(serving);
        serving = null;
        // The same final state written straight to each engine with its bulk path, one engine at a time.
        ctx.progress(`backup move: round ${round + 1}: the engines' floor for the same records`);
        const floor = await measureEngineFloor(restored.config as DistributedConfig, ctx.options.enginePids);
        const floorSeconds = [...floor.values()].reduce((sum, part) => sum + part.seconds, 0);
        figures.floor.push(floorSeconds);
        figures.floorRatio.push(restoreSeconds / floorSeconds);

        figures.restore.push(restoreSeconds);
        figures.perChunk.push((restoreSeconds * 1000) / chunks);
        figures.serving.push(servingSeconds);
        figures.documents.push(documents.size);
        figures.missing.push([...sourceDocuments].filter((id) => !documents.has(id)).length);
        const shared = tops.reduce(
          (sum, top, i) => sum + top.filter((id) => (sourceTops[i] as string[]).includes(id)).length,
          0,
        );
        const total = sourceTops.reduce((sum, top) => sum + top.length, 0);
        figures.overlap.push(total === 0 ? Number.NaN : shared / total);
        ctx.progress(
          `backup move: round ${round + 1}: restore ${restoreSeconds.toFixed(1)} s, serving after ${servingSeconds.toFixed(1)} s`,
        );
      } finally {
        await restored.cleanup();
      }
      await rm(dest, { recursive: true, force: true });
    }

    addFigure(row, 'kb backup (embedded)', 's', figures.backup);
    addFigure(row, 'kb restore onto the engines', 's', figures.restore);
    addFigure(row, 'kb restore per chunk', 'ms/chunk', figures.perChunk);
    addFigure(row, 'restore to serving (kb restore, kb serve, a search answered)', 's', figures.serving);
    addFigure(row, 'engines’ floor: the same records written straight with bulk requests', 's', figures.floor);
    addFigure(row, 'kb restore ÷ engines’ floor', 'ratio', figures.floorRatio);
    addFigure(row, `documents listed (source: ${sourceDocuments.size})`, 'docs', figures.documents);
    judge(addFigure(row, 'source documents missing after the restore', 'docs', figures.missing), { atMost: 0 });
    addFigure(row, 'semantic top 10 shared with the source (two vector indexes)', 'fraction', figures.overlap);
    row.notes.push(
      `backup move: ${chunks} synthetic chunks written on the embedded runtime, backed up with kb backup and ` +
        'restored with KB_RUNTIME=distributed kb restore into a fresh prefix, database and bucket; commands are child ' +
        'processes and their times include the process start; restore to serving runs from the start of kb restore ' +
        'until the restored kb serve answers a hybrid search',
    );
    return row;
  } finally {
    if (serving) await stopChild(serving);
    await rm(work, { recursive: true, force: true });
    await source.cleanup();
  }
}
