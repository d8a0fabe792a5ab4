import { parseArgs } from 'node:util';
import { STAGE_NAMES, type StageName } from '../../../core/events/events.ts';
import { configuredModelTag } from '../../../core/runtime/create-embedding-provider.ts';
import { createRuntime, type Runtime } from '../../../core/runtime/runtime.ts';
import { startMetricsServer } from '../../api/metrics-server.ts';
import { type RunningServer, startServer } from '../../api/server.ts';
import { boundShutdown, type Command, print, untilSignal } from './command.ts';
import { checkEmbeddingServer } from './embedding-server-check.ts';
import { fetchModelWithProgress } from './models.command.ts';

export function parseStages(value: string | undefined, fallback: readonly StageName[]): StageName[] {
  if (value === undefined) return [...fallback];
  if (value === 'all') return [...STAGE_NAMES];
  if (value === 'none' || value === '') return [];
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !STAGE_NAMES.includes(n as StageName));
  if (unknown.length > 0) {
    throw new Error(`Unknown stage ${unknown.join(', ')}; stages are ${STAGE_NAMES.join(', ')}.`);
  }
  return [...new Set(names)] as StageName[];
}

/**
 * Says at start-up, in one paragraph, when the index holds vectors of another model than the one
 * configured (e.g. after the default model changed): semantic search refuses and hybrid search
 * falls back to keyword until `kb reindex` moves the index. Returns whether it warned.
 */
export async function warnOnModelChange(runtime: Runtime, err: NodeJS.WritableStream): Promise<boolean> {
  const held = await runtime.services.reindex.indexModel();
  const configured = configuredModelTag(runtime.config.embedding);
  if (held === null || held.model === configured) return false;
  err.write(
    `\nWarning: the index holds vectors of ${held.model} but the service is configured to embed with ${configured}.\n` +
      'Until the index is moved, semantic search answers 409 and hybrid search falls back to keyword search.\n' +
      'Run `kb reindex` (it re-embeds every stored chunk with the configured model, reusing cached vectors),\n' +
      `or configure the index's model again (see KB_EMBEDDING_PROVIDER, KB_TRANSFORMERS_MODEL and KB_EMBEDDING_MODEL).\n\n`,
  );
  return true;
}

/** On first start with no key at all, creates one with every permission and prints it once. */
export async function bootstrapKey(runtime: Runtime, out: NodeJS.WritableStream): Promise<void> {
  if (!runtime.config.bootstrapKey) return;
  if ((await runtime.services.keys.count()) > 0) return;
  const { key, record } = await runtime.services.keys.create({
    workspaceId: 'default',
    name: 'bootstrap',
    permissions: ['read', 'search', 'write'],
    plan: 'enterprise',
  });
  out.write(
    `\nNo API key existed, so one was created for workspace "default" with read, search and write (id ${record.id}).\n` +
      `It is shown only this once:\n\n  ${key}\n\nTry:  export KB_KEY=${key}\n\n`,
  );
}

/**
 * On first start with no dashboard account at all, creates an owner of workspace `default` and
 * prints its generated password once; the dashboard has it changed at the first sign-in.
 */
export async function bootstrapAccount(runtime: Runtime, out: NodeJS.WritableStream): Promise<void> {
  if (!runtime.config.dashboard.bootstrapAccount) return;
  if ((await runtime.services.accounts.count()) > 0) return;
  const { account, password } = await runtime.services.accounts.create({
    email: 'owner@kb.local',
    workspaceIds: ['default'],
    role: 'owner',
  });
  out.write(
    `No dashboard account existed, so an owner account was created for workspace "default".\n` +
      `Sign in at /dashboard/ with this one-time password (shown only this once; it asks you to choose your own):\n\n` +
      `  email:    ${account.email}\n  password: ${password}\n\n`,
  );
}

export const serveCommand: Command = {
  async run(args, { loadConfig, out, err }) {
    const config = await loadConfig();
    const { values } = parseArgs({ args, options: { stages: { type: 'string' } } });
    const stages = parseStages(values.stages, config.runtime === 'embedded' ? STAGE_NAMES : []);
    // Search embeds queries, so the API needs the model as much as the embed stage does.
    print(err, await fetchModelWithProgress(config, err));
    const runtime = await createRuntime(config, {
      stages,
      sweepLeftovers: true,
      drainNotifications: true,
      followKeywordIndex: true,
      // Sync runs are pipeline work: processes running stages run them (and the schedules).
      runSources: stages.length > 0,
      dispatchWebhooks: config.webhooks.dispatch,
    });
    try {
      await warnOnModelChange(runtime, err);
      await checkEmbeddingServer(runtime, err);
      await bootstrapKey(runtime, out);
      await bootstrapAccount(runtime, out);
      const server = await startServer({
        config,
        services: runtime.services,
        version: runtime.version,
        metrics: runtime.metrics,
        logger: { level: config.logLevel },
      });
      const metricsPort = config.metrics.port;
      const metricsServer =
        metricsPort === null ? null : await startOwnMetricsServer(runtime, metricsPort).catch(closing(server));
      print(
        out,
        `kb-document-service ${runtime.version} listening on ${server.url} — ${config.runtime} runtime` +
          (config.runtime === 'embedded' ? `, data in ${config.dataDir}` : '') +
          `, stages: ${stages.length > 0 ? stages.join(', ') : 'none'}`,
      );
      if (metricsServer) print(out, `Metrics on ${metricsServer.url}/metrics`);
      const signal = await untilSignal();
      print(
        out,
        `Received ${signal}; stopping ingestion at its next batch boundary and closing (at most ${config.shutdownGraceMs} ms; a second signal exits at once)…`,
      );
      boundShutdown(err, signal, config.shutdownGraceMs);
      // Ingestion stops at its next batch boundary now, not after the HTTP server has closed.
      const ingestionStopped = runtime.stopIngestion();
      await metricsServer?.close();
      await server.close();
      await ingestionStopped;
    } finally {
      await runtime.close();
    }
    return 0;
  },
};

/** Port a worker serves `/metrics` on when neither `--metrics-port` nor `KB_METRICS_PORT` says. */
export const DEFAULT_WORKER_METRICS_PORT = 9464;

function startOwnMetricsServer(runtime: Runtime, port: number): Promise<RunningServer> {
  return startMetricsServer({ config: runtime.config, metrics: runtime.metrics, services: runtime.services, port });
}

/** Closes `server` and rethrows: a listener that cannot start must not leave the other one open. */
function closing(server: RunningServer) {
  return async (error: unknown): Promise<never> => {
    await server.close();
    throw error;
  };
}

export function parsePort(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new Error(`${option} must be a port number (0–65535), not "${value}".`);
  return port;
}

export const workerCommand: Command = {
  async run(args, { loadConfig, out, err }) {
    const config = await loadConfig();
    const { values } = parseArgs({
      args,
      options: { stages: { type: 'string', default: 'all' }, 'metrics-port': { type: 'string' } },
    });
    const stages = parseStages(values.stages, STAGE_NAMES);
    if (stages.length === 0) throw new Error('kb worker needs at least one stage (--stages parse,chunk,embed,index).');
    const metricsPort =
      parsePort(values['metrics-port'], '--metrics-port') ?? config.metrics.port ?? DEFAULT_WORKER_METRICS_PORT;
    if (stages.includes('embed')) print(err, await fetchModelWithProgress(config, err));
    // Source syncs delete documents too: their notifications are drained here as well.
    const runtime = await createRuntime(config, {
      stages,
      sweepLeftovers: true,
      drainNotifications: true,
      runSources: true,
    });
    try {
      if (stages.includes('embed')) {
        await warnOnModelChange(runtime, err);
        await checkEmbeddingServer(runtime, err);
      }
      const metricsServer = await startOwnMetricsServer(runtime, metricsPort);
      print(
        out,
        `kb worker running stages ${stages.join(', ')} (${config.runtime} runtime); metrics on ${metricsServer.url}/metrics`,
      );
      const signal = await untilSignal();
      print(
        out,
        `Received ${signal}; stopping at the next batch boundary and leaving the consumer groups (at most ${config.shutdownGraceMs} ms; a second signal exits at once)…`,
      );
      boundShutdown(err, signal, config.shutdownGraceMs);
      await metricsServer.close();
    } finally {
      await runtime.close();
    }
    return 0;
  },
};
