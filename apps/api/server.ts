/** Starts the HTTP API on `config.host:config.port`. */
import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from './app.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** Stops accepting connections and waits for in-flight requests. Does not close the services. */
  close(): Promise<void>;
}

/**
 * Builds the app and listens. Logs at `config.logLevel` unless `deps.logger` says otherwise.
 * Port 0 picks a free port (see `url`).
 */
export async function startServer(deps: AppDeps): Promise<RunningServer> {
  const app = await buildApp({ ...deps, logger: deps.logger ?? { level: deps.config.logLevel } });
  await app.listen({ host: deps.config.host, port: deps.config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : deps.config.port;
  const host = deps.config.host.includes(':') ? `[${deps.config.host}]` : deps.config.host;
  return {
    app,
    url: `http://${host}:${port}`,
    close: () => app.close(),
  };
}
