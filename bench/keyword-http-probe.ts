/**
 * `node --import tsx bench/keyword-http-probe.ts [--size 100k] [--queries 200] [--rounds 2]`: keyword
 * search through HTTP on the embedded runtime, with the keyword index and without it (exact FTS5),
 * over the same data directory in the same run.
 *
 * Writes `--size` chunks of Zipf-distributed text (`lib/zipf-text.ts`, 100 chunks per document, no
 * vectors) through the store port into a fresh data directory, then, per round and in alternating
 * order, starts `kb serve --stages none` with `KB_KEYWORD_INDEX` true and false, waits (index on)
 * until the log says the index was built or loaded, and sends each query once (`mode: keyword`,
 * `limit` 10) from one client, then from 8 concurrent clients. Prints p50/p95 per setting and round.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSqliteDocumentStore } from '../core/ports/document-store/sqlite.adapter.ts';
import { createKey, startChild, stopChild, tempDir } from '../support/child-service.ts';
import { createRandom } from './lib/random.ts';
import { quantile } from './lib/stats.ts';
import { writeTextDocument } from './lib/text-document.ts';
import { chunks, queries, vocabulary, zipfTable } from './lib/zipf-text.ts';

const PER_DOCUMENT = 100;
const CLIENTS = 8;
const WORKSPACE = 'probe';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100k' },
    queries: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
  },
});
const label = values.size;
const size = Number.parseInt(label, 10) * (label.endsWith('m') ? 1_000_000 : label.endsWith('k') ? 1000 : 1);
const rounds = Number.parseInt(values.rounds, 10);

const dir = await tempDir('kb-keyword-http-');
const env = {
  KB_RUNTIME: 'embedded',
  KB_DATA_DIR: dir.path,
  KB_EMBEDDING_PROVIDER: 'local',
  KB_MODEL_FETCH: 'false',
  KB_BOOTSTRAP_KEY: 'false',
  KB_LOG_LEVEL: 'info',
  HOST: '127.0.0.1',
};

try {
  const words = vocabulary(createRandom(3));
  const cdf = zipfTable(words.length);
  let started = performance.now();
  const store = createSqliteDocumentStore({ file: path.join(dir.path, 'documents.db') });
  let index = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const id = `doc-${String(index).padStart(8, '0')}`;
    await writeTextDocument(store, { id, workspaceId: WORKSPACE, name: `doc-${index}.txt`, createdBy: 'probe' }, batch);
    index += 1;
    batch = [];
  };
  for (const content of chunks(size, words, cdf)) {
    batch.push(content);
    if (batch.length === PER_DOCUMENT) await flush();
  }
  await flush();
  await store.close();
  console.log(`wrote ${size} chunks in ${Math.round((performance.now() - started) / 1000)} s`);

  // Enterprise keys allow 10,000 requests a minute each; requests rotate over them.
  const keys: string[] = [];
  for (let i = 0; i < CLIENTS; i += 1) {
    keys.push(
      (await createKey(env, { workspace: WORKSPACE, name: `probe-${i}`, permissions: 'search', plan: 'enterprise' }))
        .key,
    );
  }
  let asked = 0;
  const texts = queries(Number.parseInt(values.queries, 10), words, cdf);

  const measure = async (withIndex: boolean, round: number) => {
    started = performance.now();
    const child = await startChild(['serve', '--stages', 'none'], {
      ...env,
      KB_KEYWORD_INDEX: String(withIndex),
    });
    try {
      if (withIndex) {
        while (!/keyword index: (rebuilt|loaded)/.test(child.output())) {
          if (child.process.exitCode !== null) throw new Error(child.output());
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      const ready = Math.round((performance.now() - started) / 100) / 10;
      const ask = async (text: string) => {
        const t = performance.now();
        const response = await fetch(`${child.url}/api/v1/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': keys[asked++ % keys.length] as string },
          body: JSON.stringify({ query: text, mode: 'keyword', limit: 10 }),
        });
        if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
        await response.json();
        return performance.now() - t;
      };
      for (const text of texts.slice(0, 10)) await ask(text);
      const one: number[] = [];
      for (const text of texts) one.push(await ask(text));
      const eight: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < texts.length) eight.push(await ask(texts[next++] as string));
        }),
      );
      const ms = (samples: number[], q: number) => Math.round(quantile(samples, q) * 10) / 10;
      console.log(
        JSON.stringify({
          chunks: size,
          round,
          keywordIndex: withIndex,
          readySeconds: ready,
          oneClient: { p50: ms(one, 0.5), p95: ms(one, 0.95) },
          eightClients: { p50: ms(eight, 0.5), p95: ms(eight, 0.95) },
        }),
      );
    } finally {
      await stopChild(child);
    }
  };
  for (let round = 1; round <= rounds; round += 1) {
    const order = round % 2 === 1 ? [true, false] : [false, true];
    for (const withIndex of order) await measure(withIndex, round);
  }
} finally {
  await dir.remove();
}
console.log(`(${os.availableParallelism()} cores)`);
