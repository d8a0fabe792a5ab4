/**
 * `keyword-index`: the embedded store's keyword query with the keyword index (LanceDB) on and off
 * (exact FTS5), at 2k, 10k and 100k chunks (2k and 10k in a quick run), on one database grown size
 * by size. Chunks and queries are Zipf-distributed text (`lib/zipf-text.ts`: 120-word chunks over a
 * 60,000-word vocabulary, 2–6-word queries half common and half rare words), 100 chunks a document,
 * one workspace.
 *
 * Per size, two stores open the same file: one with the keyword index as `kb serve` runs it (the
 * configured settings, following the database; the index rebuilt fresh for the size and waited for)
 * and one without it. Every query goes to both, alternating which goes first; the store is asked
 * for the service's candidate count, as an HTTP keyword or hybrid search asks it (workspace filter,
 * versions served now). Figures: p50 and p95 of each, and their ratio per round (the goal: the index
 * never slower than FTS5 alone, noise aside). Below `KB_KEYWORD_INDEX_EXACT_BELOW` chunks the store
 * with the index answers on FTS5 by design.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { DocumentStore, StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { SEARCH_CANDIDATES } from '../../core/services/search.service.ts';
import { sizeLabel } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { latencies } from '../lib/stats.ts';
import type { Target } from '../lib/target.ts';
import { writeTextDocument } from '../lib/text-document.ts';
import { chunks, queries, vocabulary, zipfTable } from '../lib/zipf-text.ts';

const PER_DOCUMENT = 100;
const WORKSPACE = 'bench-keywords';
const QUERIES = 100;
/** How much slower than FTS5 alone the index may measure before it counts as slower (shared-machine noise). */
const NOISE = 0.1;

export const KEYWORD_INDEX_SIZES = [2_000, 10_000, 100_000] as const;

async function writeChunks(store: DocumentStore, texts: Iterator<string>, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += PER_DOCUMENT) {
    const n = Math.min(PER_DOCUMENT, to - start);
    const contents = Array.from({ length: n }, () => texts.next().value as string);
    const id = `kw-${String(start).padStart(9, '0')}`;
    await writeTextDocument(
      store,
      { id, workspaceId: WORKSPACE, name: `kw-${start}.txt`, createdBy: 'bench' },
      contents,
    );
  }
}

export async function keywordIndexScenario(ctx: BenchContext, target: Target, rows: Row[]): Promise<void> {
  if (target.runtime !== 'embedded') return;
  const sizes = ctx.options.quick ? KEYWORD_INDEX_SIZES.slice(0, 2) : [...KEYWORD_INDEX_SIZES];
  const instance = await target.fresh();
  try {
    const settings = instance.config.keywordIndex;
    if (settings === null) throw new Error('KB_KEYWORD_INDEX is false: nothing to compare');
    const file = path.join(instance.config.dataDir, 'documents.db');
    const words = vocabulary(createRandom(ctx.options.seed));
    const cdf = zipfTable(words.length);
    const texts = chunks(sizes[sizes.length - 1] as number, words, cdf);
    const asked = queries(QUERIES, words, cdf);
    const query = (text: string): StoreSearchQuery => ({
      workspaceId: WORKSPACE,
      text,
      limit: SEARCH_CANDIDATES,
      asOf: null,
      filters: {},
    });
    let written = 0;
    for (const size of sizes) {
      const label = `${sizeLabel(size)} chunks`;
      ctx.progress(`keyword index (${label}): writing chunks`);
      const writer = createSqliteDocumentStore({ file });
      try {
        await writeChunks(writer, texts, written, size);
      } finally {
        await writer.close();
      }
      written = size;
      // A fresh index for the size: every row merged, as a served index is once it has caught up.
      rmSync(`${file}.keywords`, { recursive: true, force: true });
      const logged: string[] = [];
      const exact = createSqliteDocumentStore({ file });
      const indexed = createSqliteDocumentStore({
        file,
        keywordIndex: { ...settings, follow: true, log: (message) => logged.push(message) },
      });
      try {
        ctx.progress(`keyword index (${label}): building the index`);
        const started = performance.now();
        while (!logged.some((line) => line.includes('rebuilt from the database'))) {
          if (performance.now() - started > 30 * 60_000)
            throw new Error(`keyword index not built: ${logged.join('; ')}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const buildSeconds = (performance.now() - started) / 1000;
        for (const text of asked.slice(0, 10)) {
          await exact.keywordSearch(query(text));
          await indexed.keywordSearch(query(text));
        }
        const onP50: number[] = [];
        const offP50: number[] = [];
        const onP95: number[] = [];
        const offP95: number[] = [];
        const ratio: number[] = [];
        for (let round = 0; round < ctx.options.rounds; round++) {
          ctx.progress(`keyword index (${label}): round ${round + 1}`);
          const on: number[] = [];
          const off: number[] = [];
          for (const [i, text] of asked.entries()) {
            const order = (i + round) % 2 === 0 ? [indexed, exact] : [exact, indexed];
            for (const store of order) {
              const t = performance.now();
              await store.keywordSearch(query(text));
              (store === indexed ? on : off).push(performance.now() - t);
            }
          }
          const a = latencies(on);
          const b = latencies(off);
          onP50.push(a.p50);
          offP50.push(b.p50);
          onP95.push(a.p95);
          offP95.push(b.p95);
          ratio.push(a.p50 / b.p50);
        }
        const row = createRow('keyword index (store query)', 'embedded', label);
        addFigure(row, 'index on p50', 'ms', onP50);
        addFigure(row, 'index off (FTS5) p50', 'ms', offP50);
        judge(addFigure(row, 'on p50 ÷ off p50', 'ratio', ratio), { atMost: 1 + NOISE });
        addFigure(row, 'index on p95', 'ms', onP95);
        addFigure(row, 'index off (FTS5) p95', 'ms', offP95);
        addFigure(row, 'index build', 's', [buildSeconds]);
        const exactBelow = settings.exactBelow;
        row.notes.push(
          `${asked.length} Zipf queries of 2–6 words, one caller, the store asked for ${SEARCH_CANDIDATES} candidates as the search service asks; ` +
            `on = the store as kb serve opens it (index following the database, rebuilt fresh for the size); off = the same file without the index (FTS5)` +
            (size < exactBelow
              ? `; below KB_KEYWORD_INDEX_EXACT_BELOW (${exactBelow}) the store with the index answers on FTS5`
              : ''),
        );
        rows.push(row);
      } finally {
        await indexed.close();
        await exact.close();
      }
    }
  } finally {
    await instance.cleanup();
  }
}
