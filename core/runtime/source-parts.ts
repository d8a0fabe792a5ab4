import type { Config } from '../config/config.ts';
import type { Logger } from '../model/logger.model.ts';
import type { SourceRecord } from '../ports/source-store/source-store.port.ts';
import type { DocumentWritesService } from '../services/document-writes.service.ts';
import { createSourceScheduler, type SourceScheduler } from '../services/source-scheduler.service.ts';
import { createSourceSyncService, type SourceSyncService } from '../services/source-sync.service.ts';
import { createSourcesService, type SourcesService } from '../services/sources.service.ts';
import type { UploadStagingService } from '../services/upload-staging.service.ts';
import { createFolderReader } from '../sources/folder.reader.ts';
import { createItemMatcher } from '../sources/item-matcher.ts';
import { createLocationChecker } from '../sources/source-locations.ts';
import type { SourceReader } from '../sources/source-reader.ts';
import type { Ports } from './runtime-ports.ts';

/** How often a process that runs schedules looks for due sources. */
const SCHEDULE_TICK_MS = 1000;

export interface SourceParts {
  readonly sources: SourcesService;
  readonly sync: SourceSyncService;
  /** Restarts interrupted syncs, then runs schedules until `close`. */
  startSchedules(): Promise<void>;
  close(): Promise<void>;
}

/** The sources of synchronisation of one runtime: the readers of each kind, the sync engine, the service, schedules. */
export function createSourceParts(deps: {
  readonly config: Config;
  readonly ports: Ports;
  readonly uploads: UploadStagingService;
  readonly documentWrites: DocumentWritesService;
  readonly logger: Logger;
}): SourceParts {
  const { config, ports, logger } = deps;
  const settings = config.sources;

  function readerFor(source: SourceRecord): SourceReader {
    const matcher = createItemMatcher(source.include, source.exclude);
    switch (source.kind) {
      case 'folder':
        return createFolderReader({ path: source.location.path ?? '', roots: settings.folderRoots, matcher });
      default:
        throw new Error(`No reader for sources of kind ${source.kind}.`);
    }
  }

  const sync = createSourceSyncService({
    store: ports.sources,
    documents: ports.documents,
    documentWrites: deps.documentWrites,
    uploads: deps.uploads,
    readerFor,
    maxUploadBytes: config.maxUploadBytes,
    maxDeleteFraction: settings.maxDeleteFraction,
    heartbeatMs: Math.max(250, Math.floor(settings.runStaleMs / 4)),
    staleMs: settings.runStaleMs,
    logger,
  });
  const sources = createSourcesService({
    store: ports.sources,
    documents: ports.documents,
    documentWrites: deps.documentWrites,
    sync,
    checkLocation: createLocationChecker({ folderRoots: settings.folderRoots }),
  });
  let scheduler: SourceScheduler | null = null;

  return {
    sources,
    sync,
    async startSchedules() {
      // Whatever was running when this process started and has not beaten since is orphaned.
      await sync.restartInterrupted(new Date(Date.now() - settings.runStaleMs).toISOString());
      scheduler = createSourceScheduler({ store: ports.sources, sync, tickMs: SCHEDULE_TICK_MS, logger });
      scheduler.start();
    },
    async close() {
      await scheduler?.stop();
      await sync.close();
    },
  };
}
