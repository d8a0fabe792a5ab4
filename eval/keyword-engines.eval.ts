/**
 * `node --import tsx eval/keyword-engines.eval.ts --beir <folder> [--split train]`: nDCG@10 of the two
 * keyword engines of the embedded runtime, straight from each engine (no service, one document per
 * record: title, blank line, text): SQLite FTS5 as the store queries it, and LanceDB's full-text index
 * with the store's analysis, with stop words kept (the store's setting) and removed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import BetterSqlite3 from 'better-sqlite3';
import { KEYWORD_ANALYSIS } from '../core/ports/document-store/sqlite/sqlite-keyword-index.ts';
import { ftsQuery, queryWords } from '../core/ports/document-store/sqlite/sqlite-search.ts';
import { documentText, readBeir } from './lib/beir.ts';
import { mean, ndcgAt } from './lib/metrics.ts';

const { values } = parseArgs({ options: { beir: { type: 'string' }, split: { type: 'string', default: 'test' } } });
if (!values.beir)
  throw new Error('Usage: node --import tsx eval/keyword-engines.eval.ts --beir <folder> [--split train]');
// LanceDB 0.31 needs at least 2 compute threads to build a full-text index (see sqlite-keyword-index.ts).
process.env.LANCE_CPU_THREADS = String(Math.max(2, os.availableParallelism()));

const set = await readBeir(values.beir, values.split);
const rows = set.corpus.map((doc, i) => ({ seq: i + 1, id: doc.id, content: documentText(doc) }));
const ndcg = async (rank: (text: string) => Promise<string[]> | string[]) => {
  const scores: number[] = [];
  for (const q of set.queries) scores.push(ndcgAt(10, await rank(q.text), set.qrels.get(q.id) ?? new Map()));
  return mean(scores).toFixed(3);
};

const db = new BetterSqlite3(':memory:');
db.exec(`CREATE TABLE chunks (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, content TEXT NOT NULL);
  CREATE VIRTUAL TABLE chunks_fts USING fts5(content, content = 'chunks', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2');`);
const insert = db.prepare('INSERT INTO chunks (seq, id, content) VALUES (?, ?, ?)');
const insertFts = db.prepare('INSERT INTO chunks_fts (rowid, content) VALUES (?, ?)');
db.transaction(() => {
  for (const row of rows) {
    insert.run(row.seq, row.id, row.content);
    insertFts.run(row.seq, row.content);
  }
})();
const fts = db.prepare<[string], { id: string }>(
  `SELECT c.id FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid
   WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts), c.id LIMIT 10`,
);
console.log(`${set.corpus.length} documents, ${set.queries.length} queries`);
console.log(
  `FTS5 (porter unicode61 remove_diacritics 2): nDCG@10 ${await ndcg((text) => {
    const match = ftsQuery(text);
    return match === null ? [] : fts.all(match).map((row) => row.id);
  })}`,
);

const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-keyword-engines-'));
try {
  const connection = await lancedb.connect(dir);
  for (const removeStopWords of [false, true]) {
    const table = await connection.createTable(`docs_${removeStopWords}`, rows);
    await table.createIndex('content', {
      config: lancedb.Index.fts({ ...KEYWORD_ANALYSIS, removeStopWords }),
    });
    const score = await ndcg(async (text) => {
      const words = queryWords(text);
      if (words.length === 0) return [];
      const hits = (await table
        .query()
        .fullTextSearch(words.join(' '), { columns: 'content' })
        .select(['id', '_score'])
        .limit(10)
        .toArray()) as { id: string }[];
      return hits.map((hit) => hit.id);
    });
    console.log(`LanceDB full-text (stop words ${removeStopWords ? 'removed' : 'kept'}): nDCG@10 ${score}`);
  }
  connection.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
