import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import { createTransformersEmbeddingProvider } from '../../../core/ports/embedding/transformers.adapter.ts';
import { cosine } from '../../contract/embedding.contract.ts';

const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.models');
const MINILM = 'Xenova/all-MiniLM-L6-v2';
const haveModel = existsSync(path.join(MODELS_DIR, MINILM, 'config.json'));

const connections: string[] = [];
const originalConnect = net.Socket.prototype.connect;
const originalFetch = globalThis.fetch;

beforeAll(() => {
  // Any TCP connection or fetch call is recorded and refused.
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    connections.push(JSON.stringify(args[0]));
    throw new Error('network access while remote models are disabled');
  } as typeof net.Socket.prototype.connect;
  globalThis.fetch = (async (input: unknown) => {
    connections.push(String(input));
    throw new Error('network access while remote models are disabled');
  }) as typeof fetch;
});

afterAll(() => {
  net.Socket.prototype.connect = originalConnect;
  globalThis.fetch = originalFetch;
});

describe('transformers embedding provider without its model', () => {
  let empty: string;

  beforeAll(async () => {
    empty = await mkdtemp(path.join(os.tmpdir(), 'kb-models-'));
  });
  afterAll(async () => {
    await rm(empty, { recursive: true, force: true });
  });

  it('fails with a non-retriable error naming the folder, without going online', async () => {
    const error = await createTransformersEmbeddingProvider({
      model: MINILM,
      modelPath: empty,
      allowRemote: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KbError);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: false });
    expect((error as KbError).message).toContain(empty);
    expect((error as KbError).message).toContain('remote models are disabled');
    expect(connections).toEqual([]);
  });

  it('refuses a batch size that is not a positive integer', async () => {
    await expect(
      createTransformersEmbeddingProvider({ model: MINILM, modelPath: empty, allowRemote: false, batchSize: -1 }),
    ).rejects.toMatchObject({ code: 'config-invalid' });
  });
});

const title = haveModel
  ? `transformers embedding provider with ${MINILM} from tests/.models`
  : `transformers embedding provider with ${MINILM} — skipped: tests/.models/${MINILM} is missing; run \`bash tests/setup/fetch-minilm.sh\``;

describe.runIf(haveModel)(title, () => {
  const open = () => createTransformersEmbeddingProvider({ model: MINILM, modelPath: MODELS_DIR, allowRemote: false });
  let provider: EmbeddingProvider;

  beforeAll(async () => {
    provider = await open();
  });
  afterAll(async () => {
    await provider?.close();
  });

  it('loads from the local folder without going online, tagged with the model id, 384 dimensions', async () => {
    expect(provider.provider).toBe('transformers');
    expect(provider.model).toBe(`transformers/${MINILM}`);
    expect(provider.dimensions).toBe(384);
    await provider.embedDocuments(['a sentence to embed']);
    expect(connections).toEqual([]);
  });

  it('gives a text the same vector whatever else is in its batch (quantised model, one text a call)', async () => {
    const text = 'How do I reset my password?';
    const [alone] = await provider.embedDocuments([text]);
    const [withShort] = await provider.embedDocuments([text, 'Hi']);
    const batch = await provider.embedDocuments([
      'The recipe needs two cups of flour and a pinch of salt, then bake for forty minutes.',
      text,
    ]);
    expect(cosine(alone as Float32Array, withShort as Float32Array)).toBeGreaterThan(0.99999);
    expect(cosine(alone as Float32Array, batch[1] as Float32Array)).toBeGreaterThan(0.99999);
  });

  it('refuses calls after close', async () => {
    const other = await open();
    await other.close();
    await expect(other.embedQuery('x')).rejects.toBeInstanceOf(KbError);
  });
});
