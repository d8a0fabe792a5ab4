import { KbError } from '../errors/kb-error.ts';
import { createEnvReaders, type EnvReaders } from './config-readers.ts';

/** Where a client command finds the service, and the key it sends. */
export interface ClientConfig {
  /** `KB_API_URL`: the service's base URL. */
  readonly url: string;
  /** `KB_API_KEY`, else `KB_KEY`; null when neither is set. */
  readonly apiKey: string | null;
}

/** The client settings, read with the readers of the whole configuration. */
export function readClientConfig({ url, opt }: Pick<EnvReaders, 'url' | 'opt'>): ClientConfig {
  return { url: url('KB_API_URL') ?? 'http://127.0.0.1:8080', apiKey: opt('KB_API_KEY') ?? opt('KB_KEY') };
}

/**
 * Only the client settings, for commands that talk to a running service over HTTP: the same
 * variables and checks as {@link loadConfig}'s `client`, without loading the schema of the whole
 * configuration (a few hundred milliseconds of every such command's start).
 */
export function loadClientConfig(env: Record<string, string | undefined> = process.env): ClientConfig {
  const problems: string[] = [];
  const client = readClientConfig(createEnvReaders(env, problems));
  if (problems.length > 0) {
    throw new KbError('config-invalid', `Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return client;
}
