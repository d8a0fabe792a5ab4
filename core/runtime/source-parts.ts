import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config/config.ts';
import { type SourceSyncRequested, sourceSyncTopics } from '../events/source-events.ts';
import type { Logger } from '../model/logger.model.ts';
import type { Subscription } from '../ports/message-log/message-log.port.ts';
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
import { retryStartUp } from '../util/start-up-retry.ts';
import { isoNow } from '../util/time.ts';
import type { Ports } from './runtime-ports.ts';

/** How often a process that runs schedules looks for due sources. */
const SCHEDULE_TICK_MS = 1000;

export interface SourceParts {
  readonly sources: SourcesService;
  readonly sync: SourceSyncService;
  /**
   * Makes this process run syncs until `close`: schedules, and on the embedded runtime the syncs
   * its previous run left going; on the distributed runtime, the sync requests of the message log.
   */
  start(): Promise<void>;
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
  const distributed = config.runtime === 'distributed';
  const syncTopics = sourceSyncTopics(config.topicPrefix);

  /** Distributed: a claimed run goes on the log, keyed by its source, for any process of the group. */
  async function publishRun(source: SourceRecord, run: { id: string }): Promise<void> {
    const event: SourceSyncRequested = {
      event_id: uuidv7(),
      occurred_at: isoNow(),
      trace_id: run.id,
      workspace_id: source.workspaceId,
      source_id: source.id,
      run_id: run.id,
    };
    await ports.log.publish(syncTopics.topic, [{ key: source.id, value: { ...event } }]);
  }

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
    ...(distributed ? { dispatch: publishRun } : {}),
  });
  const sources = createSourcesService({
    store: ports.sources,
    documents: ports.documents,
    documentWrites: deps.documentWrites,
    sync,
    checkLocation: createLocationChecker({ folderRoots: settings.folderRoots }),
  });
  let scheduler: SourceScheduler | null = null;
  let consumer: Subscription | null = null;

  return {
    sources,
    sync,
    async start() {
      if (distributed) {
        consumer = await retryStartUp(
          ports.log.kind,
          "start the source syncs' consumer",
          () =>
            ports.log.subscribe({
              groupId: syncTopics.group,
              topics: [syncTopics.topic],
              handler: async (message) => {
                const request = message.value as unknown as SourceSyncRequested;
                await sync.runClaimed({
                  workspaceId: request.workspace_id,
                  sourceId: request.source_id,
                  runId: request.run_id,
                });
              },
            }),
          { boundMs: config.startupTimeoutMs },
        );
      } else {
        // The one process of the embedded runtime stopped while these were going.
        await sync.resumeInterrupted();
      }
      scheduler = createSourceScheduler({ store: ports.sources, sync, tickMs: SCHEDULE_TICK_MS, logger });
      scheduler.start();
    },
    async close() {
      await scheduler?.stop();
      // Going runs stop at their next item; their requests stay uncommitted and are delivered again.
      const stopping = sync.close();
      await consumer?.stop();
      await stopping;
    },
  };
}
