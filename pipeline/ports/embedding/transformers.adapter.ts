import path from 'node:path';
import { env, type FeatureExtractionPipeline, pipeline } from '@huggingface/transformers';
import { KbError } from '../../errors/kb-error.ts';
import { createBatchedProvider, requireBatchSize, unitRows } from './batched-provider.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

const DEFAULT_BATCH_SIZE = 32;
/**
 * Weight types whose ONNX graphs quantise activations at run time (DynamicQuantizeLinear) with one
 * scale for the whole input tensor, so a text's vector would shift with its batch neighbours (cosine
 * about 0.995 against the text embedded alone). Such models embed one text per call.
 */
const BATCH_DEPENDENT_DTYPES = new Set(['q8', 'int8', 'uint8']);
const DIMENSION_PROBE = 'dimension probe';

export interface TransformersEmbeddingOptions {
  /** Model id, e.g. `Xenova/all-MiniLM-L6-v2`: a folder under `modelPath`, or a model hub repository. */
  readonly model: string;
  /** Folder holding `<model>/` (config.json, tokenizer files, onnx/); null keeps the library's default. */
  readonly modelPath: string | null;
  /** Whether the model may be downloaded from the model hub when it is not found locally. */
  readonly allowRemote: boolean;
  /** Texts per model call (default 32); forced to 1 for dynamically quantised models, see above. */
  readonly batchSize?: number;
  /** ONNX weight type (`fp32`, `q8`, ...); by default the model's config decides, else fp32 on CPU. */
  readonly dtype?: 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';
}

/**
 * Any ONNX sentence-embedding model through `@huggingface/transformers` (ONNX Runtime on CPU): the
 * feature-extraction pipeline with mean pooling over the attention mask and L2 normalisation. The model
 * is tagged `transformers/<model>`; its dimensions are read from a probe embedding at start.
 *
 * Loading configures the library's process-wide `env` (remote models allowed or not, the local model
 * folder) just before the model loads. With `allowRemote` false nothing is fetched: a model missing from
 * `modelPath` fails with a non-retriable `embedding-failed` that names the folder searched.
 * Queries and documents embed the same way. Calls to one provider run one batch at a time.
 */
export async function createTransformersEmbeddingProvider(
  options: TransformersEmbeddingOptions,
): Promise<EmbeddingProvider> {
  const requestedBatch = options.batchSize ?? DEFAULT_BATCH_SIZE;
  requireBatchSize(requestedBatch);
  const localRoot = options.modelPath === null ? null : path.resolve(options.modelPath);
  env.allowLocalModels = true;
  env.allowRemoteModels = options.allowRemote;
  if (localRoot !== null) env.localModelPath = localRoot;

  let extractor: FeatureExtractionPipeline;
  try {
    extractor = await pipeline('feature-extraction', options.model, {
      local_files_only: !options.allowRemote,
      ...(options.dtype ? { dtype: options.dtype } : {}),
    });
  } catch (error) {
    const where = localRoot === null ? 'the default model folder' : `${localRoot}`;
    const hint = options.allowRemote
      ? 'it was not found locally and could not be downloaded'
      : `it is not in ${where} and remote models are disabled (KB_TRANSFORMERS_ALLOW_REMOTE=false)`;
    throw new KbError(
      'embedding-failed',
      `The embedding model ${options.model} could not be loaded: ${hint}: ${describe(error)}`,
      { cause: error, retriable: false },
    );
  }

  const dtype = loadedDtype(extractor);
  const batchSize = dtype !== null && BATCH_DEPENDENT_DTYPES.has(dtype) ? 1 : requestedBatch;
  let queue: Promise<unknown> = Promise.resolve();

  const runBatch = (texts: readonly string[]): Promise<Float32Array[]> => {
    const run = queue.then(async () => {
      let output: { data: unknown; dims: number[] };
      try {
        output = await extractor([...texts], { pooling: 'mean', normalize: true });
      } catch (error) {
        throw new KbError('embedding-failed', `The embedding model ${options.model} failed: ${describe(error)}`, {
          cause: error,
          retriable: false,
        });
      }
      return splitRows(output, texts.length);
    });
    queue = run.catch(() => undefined);
    return run;
  };

  const [probe] = await runBatch([DIMENSION_PROBE]);
  const dimensions = (probe as Float32Array).length;

  return createBatchedProvider({
    provider: 'transformers',
    model: `transformers/${options.model}`,
    dimensions,
    batchSize,
    embedBatch: runBatch,
    async release() {
      await queue;
      await extractor.dispose();
    },
  });
}

/** The weight type the library resolved for the loaded model, when it tells. */
function loadedDtype(extractor: FeatureExtractionPipeline): string | null {
  const sessions = (extractor.model as unknown as { sessions?: Record<string, { config?: { dtype?: unknown } }> })
    .sessions;
  const dtype = sessions?.model?.config?.dtype;
  return typeof dtype === 'string' ? dtype : null;
}

function splitRows(output: { data: unknown; dims: number[] }, expected: number): Float32Array[] {
  const [rows, width] = output.dims;
  if (output.dims.length !== 2 || rows !== expected || !width || !(output.data instanceof Float32Array)) {
    throw new KbError(
      'embedding-failed',
      `The embedding model returned a tensor of shape [${output.dims.join(', ')}] for ${expected} texts`,
      { retriable: false },
    );
  }
  return unitRows(output.data, width, rows, 'The embedding model');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
