/**
 * `node --import tsx bench/keyword-size-probe.ts [--sizes 2k,5k,10k] [--queries 100] [--rounds 3]`:
 * keyword query latency through the SQLite document store's `keywordSearch` (the path an HTTP
 * keyword search takes: workspace filter, served-now filter), with the keyword index and without
 * it (exact FTS5), on one database grown size by size.
 *
 * Per size: the store with the index and one without it open the same file; each round sends every
 * query to both, alternating which goes first, and prints per round the p50 of each and, with the
 * index, where its time goes (the index's own answer, of which the LanceDB query alone).
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import type { DocumentStore, StoreSearchQuery } from '../core/ports/document-store/document-store.port.ts';
import { queryWords } from '../core/ports/document-store/sqlite/sqlite-search.ts';
import { createSqliteDocumentStore } from '../core/ports/document-store/sqlite.adapter.ts';
import { tempDir } from '../support/child-service.ts';
import { createRandom } from './lib/random.ts';
import { quantile } from './lib/stats.ts';
import { writeTextDocument } from './lib/text-document.ts';
import { chunks, queries, vocabulary, zipfTable } from './lib/zipf-text.ts';

const PER_DOCUMENT = 20;
const WORKSPACE = 'probe';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '2k,5k,10k,20k,50k,100k' },
    queries: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    grow: { type: 'boolean', default: false },
    // What the search service asks the store for (SEARCH_CANDIDATES), whatever the client's limit.
    limit: { type: 'string', default: '100' },
  },
});
const parse = (label: string) =>
  Number.parseInt(label, 10) * (label.endsWith('m') ? 1_000_000 : label.endsWith('k') ? 1000 : 1);
const sizes = values.sizes.split(',').map(parse);
const rounds = Number.parseInt(values.rounds, 10);
const dir = await tempDir('kb-keyword-size-');
const file = path.join(dir.path, 'documents.db');
const words = vocabulary(createRandom(3));
const cdf = zipfTable(words.length);
const texts = queries(Number.parseInt(values.queries, 10), words, cdf);
const corpus = chunks(sizes[sizes.length - 1] as number, words, cdf);
let written = 0;
let docIndex = 0;

async function grow(store: DocumentStore, to: number): Promise<void> {
  while (written < to) {
    const batch: string[] = [];
    while (batch.length < PER_DOCUMENT && written + batch.length < to) batch.push(corpus.next().value as string);
    const id = `doc-${String(docIndex++).padStart(8, '0')}`;
    await writeTextDocument(store, { id, workspaceId: WORKSPACE, name: 'doc.txt', createdBy: 'probe' }, batch);
    written += batch.length;
  }
}

const query = (text: string): StoreSearchQuery => ({
  workspaceId: WORKSPACE,
  text,
  limit: Number.parseInt(values.limit, 10),
  asOf: null,
  filters: {},
});
const ms = (samples: number[], q = 0.5) => Math.round(quantile(samples, q) * 100) / 100;

try {
  for (const size of sizes) {
    const writer = createSqliteDocumentStore({ file });
    await grow(writer, size);
    await writer.close();
    // A fresh index (one fragment, every row indexed), unless asked to catch the last one up.
    if (!values.grow) rmSync(`${file}.keywords`, { recursive: true, force: true });
    const exact = createSqliteDocumentStore({ file });
    const indexed = createSqliteDocumentStore({ file, keywordIndex: { syncBelow: 1_000_000_000 } });
    for (const text of texts.slice(0, 5)) await indexed.keywordSearch(query(text));
    const saved = JSON.parse(readFileSync(`${file}.keywords/state.json`, 'utf8')) as { table: string };
    const table = await (await lancedb.connect(`${file}.keywords/lance`)).openTable(saved.table);
    const lance = (text: string) =>
      table
        .query()
        .fullTextSearch(queryWords(text).join(' '), { columns: 'content' })
        .where(`workspace_id = '${WORKSPACE}'`)
        .select(['seq', '_score'])
        .limit(100)
        .toArray();
    for (const text of texts.slice(0, 10)) {
      await exact.keywordSearch(query(text));
      await indexed.keywordSearch(query(text));
      await lance(text);
    }
    const describe = async () => {
      const stats = await table.stats();
      const fts = await table.indexStats('content_idx');
      return { fragments: stats.fragmentStats.numFragments, unindexed: fts?.numUnindexedRows ?? null };
    };
    console.log(JSON.stringify({ chunks: size, ...(await describe()) }));
    for (let round = 1; round <= rounds; round += 1) {
      const on: number[] = [];
      const off: number[] = [];
      const lanceOnly: number[] = [];
      for (const [i, text] of texts.entries()) {
        const order = (i + round) % 2 === 0 ? [true, false] : [false, true];
        for (const withIndex of order) {
          const t = performance.now();
          await (withIndex ? indexed : exact).keywordSearch(query(text));
          (withIndex ? on : off).push(performance.now() - t);
        }
        const t = performance.now();
        await lance(text);
        lanceOnly.push(performance.now() - t);
      }
      console.log(
        JSON.stringify({
          chunks: size,
          round,
          onP50: ms(on),
          offP50: ms(off),
          ratio: Math.round((ms(on) / ms(off)) * 100) / 100,
          lanceQueryP50: ms(lanceOnly),
          onP95: ms(on, 0.95),
          offP95: ms(off, 0.95),
        }),
      );
    }
    if (process.env.PROBE_OPTIMIZE) {
      const t0 = performance.now();
      await table.optimize();
      const optimizeMs = Math.round(performance.now() - t0);
      const lanceOnly: number[] = [];
      for (const text of texts) {
        const t = performance.now();
        await lance(text);
        lanceOnly.push(performance.now() - t);
      }
      console.log(
        JSON.stringify({ chunks: size, optimizeMs, optimized: await describe(), lanceQueryP50: ms(lanceOnly) }),
      );
    }
    table.close();
    await indexed.close();
    await exact.close();
  }
} finally {
  await dir.remove();
}
console.log(`(${os.availableParallelism()} cores, ${os.loadavg()[0]?.toFixed(1)} load)`);
