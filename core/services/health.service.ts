import type { CheckStatus, CheckView, ReadinessView } from '../model/response-views.model.ts';

export interface HealthService {
  ready(): Promise<ReadinessView>;
}

export const SERVICE_NAME = 'kb-document-service';

export interface HealthCheck {
  /** Key under `checks`, e.g. `database`. */
  readonly name: string;
  /** What answers, e.g. `SQLite`, `ClickHouse`. */
  readonly engine: string;
  /**
   * Rejects when the dependency is unusable. Resolves when it works; resolving `{degraded: reason}`
   * says it works but is in trouble (e.g. a disk nearly full); `{detail: text}` replaces the
   * message of a healthy answer.
   */
  ping(): Promise<unknown>;
}

export interface HealthOptions {
  readonly version: string;
  readonly checks: readonly HealthCheck[];
  /** A check slower than this is `degraded`. */
  readonly slowMs?: number;
  /** A check that does not answer within this is `unhealthy`. */
  readonly timeoutMs?: number;
  /** A check that failed within this many recent probes, but answers now, is `degraded`. */
  readonly flakyWindow?: number;
}

/**
 * Readiness: each check runs with a timeout; slow or recently failing checks are `degraded`,
 * unreachable ones `unhealthy`. The overall status is the worst check.
 */
export function createHealthService(options: HealthOptions): HealthService {
  const slowMs = options.slowMs ?? 500;
  const timeoutMs = options.timeoutMs ?? 2000;
  const flakyWindow = options.flakyWindow ?? 5;
  const history = new Map<string, boolean[]>();

  const run = async (check: HealthCheck): Promise<CheckView> => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let ok = true;
    let message = `${check.engine} answered`;
    let trouble: string | null = null;
    try {
      const answer = await Promise.race([
        check.ping(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      const degraded = (answer as { degraded?: unknown } | undefined)?.degraded;
      if (typeof degraded === 'string') trouble = degraded;
      const detail = (answer as { detail?: unknown } | undefined)?.detail;
      if (typeof detail === 'string') message = detail;
    } catch (error) {
      ok = false;
      message = `${check.engine} unavailable: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
    const latency = Math.round((performance.now() - started) * 100) / 100;
    const past = history.get(check.name) ?? [];
    past.push(ok);
    if (past.length > flakyWindow) past.shift();
    history.set(check.name, past);
    let status: CheckStatus = 'healthy';
    if (!ok) status = 'unhealthy';
    else if (trouble !== null) {
      status = 'degraded';
      message = `${check.engine}: ${trouble}`;
    } else if (latency > slowMs) {
      status = 'degraded';
      message = `${check.engine} slow: ${latency} ms`;
    } else if (past.includes(false)) {
      status = 'degraded';
      message = `${check.engine} failing intermittently (${past.filter((p) => !p).length} of the last ${past.length} checks failed)`;
    }
    return { status, latency_ms: ok ? latency : null, message };
  };

  return {
    async ready(): Promise<ReadinessView> {
      const results = await Promise.all(options.checks.map(async (c) => [c.name, await run(c)] as const));
      const statuses = results.map(([, r]) => r.status);
      const status: CheckStatus = statuses.includes('unhealthy')
        ? 'unhealthy'
        : statuses.includes('degraded')
          ? 'degraded'
          : 'healthy';
      return {
        status,
        timestamp: new Date().toISOString(),
        version: options.version,
        service: SERVICE_NAME,
        checks: Object.fromEntries(results),
      };
    },
  };
}
