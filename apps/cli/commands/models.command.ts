import { parseArgs } from 'node:util';
import type { Config } from '../../../core/config/config.ts';
import { prepareEmbeddingModel } from '../../../core/runtime/create-embedding-provider.ts';
import { type Command, print } from './command.ts';
import { progressBar } from './progress.ts';

const MB = 1024 * 1024;

/**
 * Makes sure the configured embedding model is on disk, fetching it once with a progress bar on
 * stderr. Used by `kb models fetch`, by `kb serve`/`kb worker` at start and by `npm install`.
 */
export async function fetchModelWithProgress(config: Config, err: NodeJS.WritableStream): Promise<string> {
  return (await prepareModelWithProgress(config, err)).message;
}

export interface ModelOutcome {
  readonly provider: string;
  readonly model: string | null;
  /** `fetched` now, already `present`, loaded from the hub (`remote`), or `not-needed` by the provider. */
  readonly outcome: 'fetched' | 'present' | 'remote' | 'not-needed';
  readonly path: string | null;
  readonly message: string;
}

/** {@link fetchModelWithProgress} with the outcome as data (for `kb models fetch --json`). */
export async function prepareModelWithProgress(config: Config, err: NodeJS.WritableStream): Promise<ModelOutcome> {
  const { embedding } = config;
  if (embedding.provider !== 'transformers') {
    return {
      provider: embedding.provider,
      model: null,
      outcome: 'not-needed',
      path: null,
      message: `The ${embedding.provider} provider needs no model download.`,
    };
  }
  let bar: ReturnType<typeof progressBar> | null = null;
  const outcome = await prepareEmbeddingModel(embedding, ({ receivedBytes, totalBytes }) => {
    if (bar === null) {
      err.write(
        `Fetching the embedding model ${embedding.transformersModel} (${(totalBytes / MB).toFixed(1)} MB) once…\n`,
      );
      bar = progressBar('model');
      bar.start(Math.ceil(totalBytes / MB));
    }
    bar.update(receivedBytes >= totalBytes ? Math.ceil(totalBytes / MB) : Math.floor(receivedBytes / MB), 'MB');
  });
  (bar as ReturnType<typeof progressBar> | null)?.stop();
  const where = `${embedding.transformersModelPath}/${embedding.transformersModel}`;
  const base = { provider: 'transformers', model: embedding.transformersModel };
  if (outcome === 'fetched') {
    return {
      ...base,
      outcome,
      path: where,
      message: `Embedding model ${embedding.transformersModel} fetched and verified into ${where}.`,
    };
  }
  if (outcome === 'present') {
    return {
      ...base,
      outcome,
      path: where,
      message: `Embedding model ${embedding.transformersModel} is ready in ${where}.`,
    };
  }
  return {
    ...base,
    outcome: 'remote',
    path: null,
    message: `The transformers provider loads ${embedding.transformersModel} from the model hub (KB_TRANSFORMERS_ALLOW_REMOTE=true).`,
  };
}

export const modelsCommand: Command = {
  async run(args, { loadConfig, out, err, usage }) {
    const config = await loadConfig();
    const { values, positionals } = parseArgs({
      args,
      options: { 'if-possible': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
    if (values.help) {
      print(out, `Usage: ${usage}`);
      return 0;
    }
    if (positionals[0] !== 'fetch' || positionals.length > 1) {
      print(err, `Usage: ${usage}`);
      return 2;
    }
    try {
      const result = await prepareModelWithProgress(config, err);
      print(out, values.json ? JSON.stringify(result) : result.message);
      return 0;
    } catch (error) {
      if (!values['if-possible']) throw error;
      print(err, `Note: ${(error as Error).message}\nThe service will try again at its first start.`);
      return 0;
    }
  },
};
