import type { Logger } from '../model/logger.model.ts';
import type { SourceStore } from '../ports/source-store/source-store.port.ts';
import { scheduleMs } from '../sources/schedule.ts';
import type { SourceSyncService } from './source-sync.service.ts';

export interface SourceScheduler {
  /** Looks for due sources now, then every `tickMs`. */
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs sources on their schedule: a source is due when its schedule has passed since its last
 * run started (or it never ran). Any number of processes may schedule: the store's claim lets
 * one run start, the others find it running and skip it.
 */
export function createSourceScheduler(deps: {
  readonly store: SourceStore;
  readonly sync: SourceSyncService;
  readonly tickMs: number;
  readonly logger: Logger;
}): SourceScheduler {
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();

  async function tick(): Promise<void> {
    const now = Date.now();
    for (const source of await deps.store.listSources(null)) {
      const every = source.schedule === null ? null : scheduleMs(source.schedule);
      if (every === null) continue;
      const [last] = await deps.store.listRuns(source.id, 1);
      if (last && (last.status === 'running' || Date.parse(last.startedAt) + every > now)) continue;
      const run = await deps.sync.tryStart(source, { allowMassDelete: false });
      if (run) deps.logger.info({ source: source.id, run: run.id }, 'scheduled source sync started');
    }
  }

  const next = () => {
    ticking = ticking
      .then(tick)
      .catch((error: unknown) =>
        deps.logger.warn({ err: String(error) }, 'the source schedule check failed; next time'),
      );
  };

  return {
    start() {
      next();
      timer = setInterval(next, deps.tickMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await ticking;
    },
  };
}
