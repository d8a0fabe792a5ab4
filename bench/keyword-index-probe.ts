/**
 * `node --import tsx bench/keyword-index-probe.ts [--sizes 100k,1m] [--queries 200] [--dir <dir>]`:
 * top-100 keyword retrieval on one synthetic corpus, engine against engine, outside the service:
 *
 * - `fts5`: SQLite FTS5 as the embedded store queries it (an OR of the words, `ORDER BY bm25()`,
 *   which scores every matching row);
 * - `lance`: LanceDB's native full-text index (BM25 with block-max WAND pruning), the same words,
 *   the workspace as a prefilter.
 *
 * The corpus has natural term statistics: chunks of about 120 words drawn with a Zipf law (s = 1)
 * over 60,000 distinct pseudo-words; queries hold 2–6 words, half drawn by the same law (common
 * words), half uniformly (rare ones). One workspace holds 90 % of the chunks, another the rest.
 * Prints build time, bytes on disk, the median fraction of chunks a query matches, latency
 * percentiles (one query at a time, after a warm-up) and how much of FTS5's top 10 and top 100 the
 * other engine returns.
 */
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import BetterSqlite3 from 'better-sqlite3';
import { KEYWORD_ANALYSIS } from '../core/ports/document-store/sqlite/sqlite-keyword-index.ts';
import { createRandom } from './lib/random.ts';
import { quantile } from './lib/stats.ts';
import { chunks, queries, vocabulary, zipfTable } from './lib/zipf-text.ts';

const TOP = 100;

function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(full) : statSync(full).size;
  }
  return total;
}

const workspaceOf = (seq: number) => (seq % 10 === 9 ? 'w1' : 'w0');

function ftsMatch(text: string): string {
  return text
    .split(' ')
    .map((w) => `"${w}"`)
    .join(' OR ');
}

async function probe(size: number, queryCount: number, root: string): Promise<void> {
  const dir = path.join(root, `probe-${size}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const words = vocabulary(createRandom(3));
  const cdf = zipfTable(words.length);

  // SQLite FTS5, as the store's schema defines it.
  let started = performance.now();
  const db = new BetterSqlite3(path.join(dir, 'fts.sqlite'));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE chunks (seq INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, content TEXT NOT NULL);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(content, content = 'chunks', content_rowid = 'seq',
      tokenize = 'porter unicode61 remove_diacritics 2');`);
  const insert = db.prepare('INSERT INTO chunks (seq, workspace_id, content) VALUES (?, ?, ?)');
  const insertFts = db.prepare('INSERT INTO chunks_fts (rowid, content) VALUES (?, ?)');
  const batch: { seq: number; workspace_id: string; content: string }[] = [];
  const table = await (async () => {
    const lance = await lancedb.connect(path.join(dir, 'lance'));
    let created: lancedb.Table | null = null;
    const flush = async () => {
      if (batch.length === 0) return;
      db.transaction(() => {
        for (const row of batch) {
          insert.run(row.seq, row.workspace_id, row.content);
          insertFts.run(row.seq, row.content);
        }
      })();
      if (created === null) created = await lance.createTable('chunks', batch);
      else await created.add(batch);
      batch.length = 0;
    };
    let seq = 1;
    for (const content of chunks(size, words, cdf)) {
      batch.push({ seq, workspace_id: workspaceOf(seq), content });
      seq += 1;
      if (batch.length === 50_000) await flush();
    }
    await flush();
    return created as unknown as lancedb.Table;
  })();
  const loadMs = performance.now() - started;

  started = performance.now();
  db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')");
  const ftsOptimizeMs = performance.now() - started;
  started = performance.now();
  await table.createIndex('content', {
    config: lancedb.Index.fts({ ...KEYWORD_ANALYSIS, removeStopWords: true }),
  });
  await table.createIndex('workspace_id', { config: lancedb.Index.bitmap() });
  const lanceIndexMs = performance.now() - started;

  const texts = queries(queryCount, words, cdf);
  const count = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?');
  const matched = texts.map((text) => (count.get(ftsMatch(text))?.n ?? 0) / size);
  const ftsQuery = db.prepare<[string, number], { seq: number }>(
    `SELECT c.seq FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid
     WHERE chunks_fts MATCH ? AND c.workspace_id = 'w0' ORDER BY bm25(chunks_fts), c.seq LIMIT ?`,
  );
  const fts = (text: string) => ftsQuery.all(ftsMatch(text), TOP).map((row) => row.seq);
  const lance = async (text: string) =>
    (
      (await table
        .query()
        .fullTextSearch(text, { columns: 'content' })
        .where("workspace_id = 'w0'")
        .select(['seq', '_score'])
        .limit(TOP)
        .toArray()) as { seq: bigint | number }[]
    ).map((row) => Number(row.seq));

  const timed = async (run: (text: string) => Promise<number[]> | number[]) => {
    for (const text of texts.slice(0, 10)) await run(text);
    const samples: number[] = [];
    const results: number[][] = [];
    for (const text of texts) {
      const t = performance.now();
      results.push(await run(text));
      samples.push(performance.now() - t);
    }
    return { samples, results };
  };
  const a = await timed(fts);
  const b = await timed(lance);
  const overlap = (n: number) =>
    quantile(
      a.results.map((expected, i) => {
        const want = expected.slice(0, n);
        if (want.length === 0) return 1;
        const got = new Set((b.results[i] as number[]).slice(0, n));
        return want.filter((seq) => got.has(seq)).length / want.length;
      }),
      0.5,
    );
  const ms = (samples: number[], q: number) => quantile(samples, q).toFixed(1);
  console.log(
    JSON.stringify({
      chunks: size,
      loadSeconds: Math.round(loadMs / 100) / 10,
      ftsOptimizeSeconds: Math.round(ftsOptimizeMs / 100) / 10,
      lanceIndexSeconds: Math.round(lanceIndexMs / 100) / 10,
      ftsBytes: bytesUnder(dir) - bytesUnder(path.join(dir, 'lance')),
      lanceBytes: bytesUnder(path.join(dir, 'lance')),
      medianMatchedFraction: quantile(matched, 0.5),
      fts5: { p50: ms(a.samples, 0.5), p95: ms(a.samples, 0.95), max: ms(a.samples, 1) },
      lance: { p50: ms(b.samples, 0.5), p95: ms(b.samples, 0.95), max: ms(b.samples, 1) },
      medianOverlapTop10: overlap(10),
      medianOverlapTop100: overlap(TOP),
    }),
  );
  db.close();
}

// LanceDB 0.31 sizes its compute pool at the cores less 2 (at least 1); with one thread its
// full-text index build stalls (the store sets the same, see sqlite-keyword-index.ts).
process.env.LANCE_CPU_THREADS = String(Math.max(2, os.availableParallelism()));

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100k' },
    queries: { type: 'string', default: '200' },
    dir: { type: 'string', default: path.join(os.tmpdir(), 'kb-keyword-probe') },
  },
});
for (const label of values.sizes.split(',')) {
  const size = Number.parseInt(label, 10) * (label.endsWith('m') ? 1_000_000 : label.endsWith('k') ? 1000 : 1);
  await probe(size, Number.parseInt(values.queries, 10), values.dir);
}
