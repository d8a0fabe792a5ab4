import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import { createLocalEmbeddingProvider, LOCAL_EMBEDDING_MODEL } from '../../../core/ports/embedding/local.adapter.ts';
import { cosine } from '../../contract/embedding.contract.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ADAPTER = path.join(REPO, 'core', 'ports', 'embedding', 'local.adapter.ts');
/** A network namespace of its own (no interfaces up) needs `unshare` and the right to use it. */
const canIsolateNetwork = spawnSync('unshare', ['-n', 'true']).status === 0;

const WORDS = ['river', 'stone', 'market', 'engine', 'cloud', 'paper', 'garden', 'silver', 'window', 'forest'];
/** Deterministic filler text of `n` words. */
function words(n: number, seed = 1): string {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return WORDS[s % WORDS.length];
  }).join(' ');
}

describe.runIf(canIsolateNetwork)('local embedding provider without a network', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kb-offline-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the bundled model and embeds in a process that has no network at all', async () => {
    const script = path.join(dir, 'offline.mts');
    await writeFile(
      script,
      `import { createLocalEmbeddingProvider } from ${JSON.stringify(pathToFileURL(ADAPTER).href)};
const provider = await createLocalEmbeddingProvider();
const [v] = await provider.embedDocuments(['offline embeddings from files inside the package']);
await provider.close();
console.log(JSON.stringify({ dimensions: v.length }));
`,
    );
    const { stdout } = await promisify(execFile)('unshare', ['-n', process.execPath, '--import', 'tsx', script], {
      cwd: REPO,
    });
    expect(JSON.parse(stdout.trim().split('\n').pop() as string)).toEqual({ dimensions: 512 });
  });
});

describe('local embedding provider', () => {
  let provider: EmbeddingProvider;

  beforeAll(async () => {
    provider = await createLocalEmbeddingProvider();
  });

  afterAll(async () => {
    await provider?.close();
  });

  it('keeps the calling thread free: timers fire while a batch of texts is embedding', async () => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 1);
    try {
      await provider.embedDocuments(Array.from({ length: 24 }, (_, i) => `${words(60, i + 1)}.`));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });

  it('names the model and its 512 dimensions', () => {
    expect(provider.provider).toBe('local');
    expect(provider.model).toBe(LOCAL_EMBEDDING_MODEL);
    expect(provider.model).toBe('local/universal-sentence-encoder-lite-512');
    expect(provider.dimensions).toBe(512);
  });

  it('reads about the first 128 tokens: text after them does not change the vector', async () => {
    const short = words(40);
    const long = words(400);
    const tail = ' Cooking pasta with fresh tomatoes and basil.';
    const [s1, s2, l1, l2] = await provider.embedDocuments([short, short + tail, long, long + tail]);
    expect(cosine(s1 as Float32Array, s2 as Float32Array)).toBeLessThan(0.99);
    expect(cosine(l1 as Float32Array, l2 as Float32Array)).toBeGreaterThan(0.99999);
  });

  it('embeds a 100,000-character text like its beginning', async () => {
    const head = words(1000, 7);
    const whole = `${head} ${words(16_000, 3)}`;
    expect(head.length).toBeGreaterThan(4096);
    expect(whole.length).toBeGreaterThan(100_000);
    const [w, h] = await provider.embedDocuments([whole, head]);
    expect(cosine(w as Float32Array, h as Float32Array)).toBeGreaterThan(0.99999);
    const [unbroken] = await provider.embedDocuments(['x'.repeat(100_000)]);
    expect(unbroken).toHaveLength(512);
  });

  it('shares one model between providers and keeps it until the last one closes', async () => {
    const second = await createLocalEmbeddingProvider({ batchSize: 4 });
    const text = 'shared weights between two providers';
    const [a] = await provider.embedDocuments([text]);
    const [b] = await second.embedDocuments([text]);
    expect(cosine(a as Float32Array, b as Float32Array)).toBeGreaterThan(0.99999);
    await second.close();
    await expect(second.embedQuery(text)).rejects.toBeInstanceOf(KbError);
    const [c] = await provider.embedDocuments([text]);
    expect(cosine(a as Float32Array, c as Float32Array)).toBeGreaterThan(0.99999);
  });

  it('loads the model again after every provider has closed', async () => {
    const first = await createLocalEmbeddingProvider();
    const [before] = await first.embedDocuments(['reload check']);
    await first.close();
    const again = await createLocalEmbeddingProvider();
    try {
      const [after] = await again.embedDocuments(['reload check']);
      expect(cosine(before as Float32Array, after as Float32Array)).toBeGreaterThan(0.99999);
    } finally {
      await again.close();
    }
  });

  it('refuses a batch size that is not a positive integer', async () => {
    await expect(createLocalEmbeddingProvider({ batchSize: 0 })).rejects.toMatchObject({ code: 'config-invalid' });
  });
});
