/**
 * Backup and restore of an embedded knowledge base of `--backup-chunks` chunks (default 100,000),
 * with the commands an operator runs, each a child process: `kb backup DEST` while `kb serve` serves
 * one search client, a second (incremental) `kb backup DEST` of the unchanged knowledge base,
 * `kb restore DEST` into an empty data directory and then `kb serve` on it (pipeline stages
 * running) until it answers a search. The anchor is `cp -r` of the same stopped data directory.
 *
 * The knowledge base is written once, straight through the document-store port as the search row
 * writes its synthetic chunks (Zipf text, vectors mixed from the real model's), plus each
 * document's file and parsed text in the object store, so a backup copies files as well.
 *
 * Embedding calls during the restore are counted by the restored service itself (its
 * `kb_embedding_batch_size` metric: one count per call to the provider with chunks; query
 * embeddings are not in it), read after it answered and the pipeline had a moment to pick up
 * anything the restore left to embed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ChildService, kb, startChild, stopChild } from '../../support/child-service.ts';
import { sizeLabel } from '../corpus.ts';
import {
  buildKnowledgeBase,
  CHUNKS_PER_DOCUMENT,
  COMMAND_TIMEOUT_MS,
  embeddingCalls,
  firstAnswer,
  METRICS_TOKEN,
  searchLoop,
  seconds,
} from '../lib/backup-knowledge-base.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv } from '../lib/service.ts';
import { latencies } from '../lib/stats.ts';
import type { Target } from '../lib/target.ts';
import { zipfQueries, zipfVocabulary } from '../lib/zipf-corpus.ts';
import { keywordIndexReady } from './search.scenario.ts';

const run = promisify(execFile);

export async function backupScenario(ctx: BenchContext, target: Target, chunks: number): Promise<Row> {
  const row = createRow('backup', target.runtime, `${sizeLabel(chunks)} chunks`);
  if (target.runtime !== 'embedded') {
    row.skipped = 'embedded runtime only';
    return row;
  }
  const vocabulary = zipfVocabulary(ctx.options.seed);
  const queryTerms = zipfQueries(vocabulary, ctx.options.latencyQueries, ctx.options.seed);
  const queries = queryTerms.map((ranks) => ranks.map((rank) => vocabulary.terms[rank]).join(' '));
  const source = await target.fresh();
  const work = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-backup-'));
  let serving: ChildService | null = null;
  try {
    ctx.progress(`backup: writing a knowledge base of ${chunks} chunks`);
    const buildStarted = performance.now();
    const { key } = await buildKnowledgeBase(ctx, source, chunks, queryTerms);
    const buildSeconds = seconds(buildStarted);
    const dataBytes = Number((await run('du', ['-sb', source.config.dataDir])).stdout.split('\t')[0]);

    const rounds = chunks >= 50_000 ? Math.min(2, ctx.options.rounds) : ctx.options.rounds;
    const figures = {
      first: [] as number[],
      firstMb: [] as number[],
      second: [] as number[],
      secondRatio: [] as number[],
      restore: [] as number[],
      serving: [] as number[],
      copy: [] as number[],
      servingRatio: [] as number[],
      firstRatio: [] as number[],
      embeddings: [] as number[],
      alone: [] as number[],
      during: [] as number[],
      searchRatio: [] as number[],
    };
    for (let round = 0; round < rounds; round++) {
      const dest = path.join(work, `backup-${round}`);
      ctx.progress(`backup: round ${round + 1}: kb serve on the knowledge base`);
      serving = await startChild(['serve', '--stages', 'none'], childEnv(source));
      await keywordIndexReady(serving.url);
      await searchLoop(serving.url, key, queries, { count: 8 });
      const alone = latencies(await searchLoop(serving.url, key, queries, { count: queries.length * 2 }));

      ctx.progress(`backup: round ${round + 1}: first backup while one client searches`);
      let started = performance.now();
      const first = kb(['backup', dest, '--json'], childEnv(source), COMMAND_TIMEOUT_MS);
      const during = latencies(await searchLoop(serving.url, key, queries, { until: first }));
      const manifest = JSON.parse(await first) as { written: { bytes: number } };
      const firstSeconds = seconds(started);

      ctx.progress(`backup: round ${round + 1}: second (incremental) backup`);
      started = performance.now();
      await kb(['backup', dest, '--json'], childEnv(source), COMMAND_TIMEOUT_MS);
      const secondSeconds = seconds(started);
      await stopChild(serving);
      serving = null;

      ctx.progress(`backup: round ${round + 1}: cp -r of the stopped data directory`);
      const copy = path.join(work, `copy-${round}`);
      started = performance.now();
      await run('cp', ['-r', source.config.dataDir, copy]);
      const copySeconds = seconds(started);
      await rm(copy, { recursive: true, force: true });

      ctx.progress(`backup: round ${round + 1}: kb restore, then kb serve until it answers a search`);
      const restored = await target.fresh();
      try {
        const env = childEnv(restored, { KB_METRICS_TOKEN: METRICS_TOKEN });
        started = performance.now();
        await kb(['restore', dest, '--json'], env, COMMAND_TIMEOUT_MS);
        const restoreSeconds = seconds(started);
        serving = await startChild(['serve'], env, { timeoutMs: COMMAND_TIMEOUT_MS });
        const servingSeconds = await firstAnswer(serving.url, key, queries[0] as string, started);
        // A moment for the stages to pick up whatever the restore left to embed.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        figures.embeddings.push(await embeddingCalls(serving.url));
        await stopChild(serving);
        serving = null;
        figures.restore.push(restoreSeconds);
        figures.serving.push(servingSeconds);
        figures.servingRatio.push(servingSeconds / copySeconds);
      } finally {
        await restored.cleanup();
      }
      await rm(dest, { recursive: true, force: true });

      figures.first.push(firstSeconds);
      figures.firstMb.push(manifest.written.bytes / 1e6);
      figures.second.push(secondSeconds);
      figures.secondRatio.push(secondSeconds / firstSeconds);
      figures.copy.push(copySeconds);
      figures.firstRatio.push(firstSeconds / copySeconds);
      figures.alone.push(alone.p50);
      figures.during.push(during.p50);
      figures.searchRatio.push(during.p50 / alone.p50);
      ctx.progress(
        `backup: round ${round + 1}: first ${firstSeconds.toFixed(1)} s, second ${secondSeconds.toFixed(1)} s, ` +
          `restore to serving ${figures.serving.at(-1)?.toFixed(1)} s, cp -r ${copySeconds.toFixed(1)} s, ` +
          `search p50 ${alone.p50.toFixed(1)} → ${during.p50.toFixed(1)} ms`,
      );
    }

    addFigure(row, 'knowledge base written (not judged)', 's', [buildSeconds]);
    addFigure(row, 'data directory', 'MB', [dataBytes / 1e6]);
    judge(addFigure(row, 'first backup (kb backup)', 's', figures.first), { atMost: 60 });
    addFigure(row, 'first backup written', 'MB', figures.firstMb);
    addFigure(row, 'second backup, unchanged (kb backup)', 's', figures.second);
    judge(addFigure(row, 'second backup ÷ first', 'ratio', figures.secondRatio), { atMost: 0.1 });
    addFigure(row, 'kb restore', 's', figures.restore);
    judge(addFigure(row, 'restore to serving (kb restore, kb serve, a search answered)', 's', figures.serving), {
      atMost: 120,
    });
    addFigure(row, 'cp -r of the stopped data directory', 's', figures.copy);
    addFigure(row, 'first backup ÷ cp -r', 'ratio', figures.firstRatio);
    addFigure(row, 'restore to serving ÷ cp -r', 'ratio', figures.servingRatio);
    judge(addFigure(row, 'embedding calls during the restore', 'calls', figures.embeddings), { atMost: 0 });
    addFigure(row, 'search p50, one client, no backup', 'ms', figures.alone);
    addFigure(row, 'search p50, one client, during the first backup', 'ms', figures.during);
    judge(addFigure(row, 'search p50 during ÷ without a backup', 'ratio', figures.searchRatio), { atMost: 2 });
    row.notes.push(
      `backup: ${chunks} synthetic chunks in documents of ${CHUNKS_PER_DOCUMENT} with their files, written through the ports; ` +
        '`kb backup`, `kb restore` and `kb serve` are child processes and their times include the process start; ' +
        'restore to serving runs from the start of `kb restore` until the restored `kb serve` (stages running) ' +
        'answers a hybrid search (its keyword and vector indexes built from the restored chunks); embedding calls ' +
        'are the restored service’s own count (kb_embedding_batch_size_count), query embeddings not included',
    );
    return row;
  } finally {
    if (serving) await stopChild(serving);
    await rm(work, { recursive: true, force: true });
    await source.cleanup();
  }
}
