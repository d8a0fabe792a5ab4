import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config/config.ts';
import { KbError } from '../errors/kb-error.ts';
import { topicNames } from '../events/events.ts';
import { publishNotification, sourceRunNotification } from '../events/notifications.ts';
import { type SourceSyncRequested, sourceSyncTopics } from '../events/source-events.ts';
import type { Logger } from '../model/logger.model.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { Subscription } from '../ports/message-log/message-log.port.ts';
import type { SourceRecord } from '../ports/source-store/source-store.port.ts';
import type { DocumentWritesService } from '../services/document-writes.service.ts';
import { createSourceScheduler, type SourceScheduler } from '../services/source-scheduler.service.ts';
import { createSourceSyncService, type SourceSyncService } from '../services/source-sync.service.ts';
import { createSourcesService, type SourcesService } from '../services/sources.service.ts';
import type { UploadStagingService } from '../services/upload-staging.service.ts';
import { createFolderReader } from '../sources/folder.reader.ts';
import { rootsOf } from '../sources/folder-roots.ts';
import { createItemMatcher } from '../sources/item-matcher.ts';
import type { S3Credentials } from '../sources/s3.reader.ts';
import { createSecretBox, parseSecretKey } from '../sources/secret-box.ts';
import { createLocationChecker } from '../sources/source-locations.ts';
import type { SourceReader } from '../sources/source-reader.ts';
import { createWebReader } from '../sources/web.reader.ts';
import { retryStartUp } from '../util/start-up-retry.ts';
import { isoNow } from '../util/time.ts';
import { lazy } from './lazy.ts';
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
  /** What the readers and the location checks may reach. */
  readonly outbound: OutboundPolicy;
}): SourceParts {
  const { config, ports, logger, outbound } = deps;
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

  const secretKey = settings.secretKey === null ? null : parseSecretKey(settings.secretKey);
  const secrets = secretKey ? createSecretBox(secretKey) : null;

  function credentialsOf(source: SourceRecord): S3Credentials | null {
    const sealed = source.location.secret;
    if (!sealed) return null;
    if (!secrets) {
      throw new KbError(
        'source-unreachable',
        'The credentials of this source cannot be decrypted: KB_SOURCE_SECRET_KEY is not set.',
      );
    }
    return JSON.parse(secrets.open(sealed)) as S3Credentials;
  }

  function readerFor(source: SourceRecord): SourceReader {
    const matcher = createItemMatcher(source.include, source.exclude);
    const { location } = source;
    switch (source.kind) {
      case 'folder':
        return createFolderReader({
          path: location.path ?? '',
          roots: rootsOf(settings.folderRoots, source.workspaceId),
          matcher,
          maxBytes: config.maxUploadBytes,
          timeoutMs: settings.itemTimeoutMs,
        });
      case 'web':
        return createWebReader({
          urls: location.urls,
          sitemap: location.sitemap,
          matcher,
          policy: outbound,
          maxBytes: config.maxUploadBytes,
          timeoutMs: settings.fetchTimeoutMs,
        });
      case 's3': {
        const credentials = credentialsOf(source);
        // The S3 client library is loaded by the first S3 source's sync, not by every process.
        return readerOnFirstUse(async () => {
          const { createS3Reader, s3Client } = await import('../sources/s3.reader.ts');
          return createS3Reader({
            client: s3Client({
              endpoint: location.endpoint ?? '',
              region: location.region,
              credentials,
              policy: outbound,
            }),
            timeoutMs: settings.fetchTimeoutMs,
            bucket: location.bucket ?? '',
            prefix: location.prefix ?? '',
            matcher,
            maxBytes: config.maxUploadBytes,
          });
        });
      }
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
    // Webhooks and the event stream hear of every finished run.
    onRunEnded: (source, run) =>
      publishNotification(ports.log, topicNames(config.topicPrefix).notification, sourceRunNotification(source, run)),
  });
  const sources = createSourcesService({
    store: ports.sources,
    documents: ports.documents,
    documentWrites: deps.documentWrites,
    sync,
    checkLocation: createLocationChecker({ folderRoots: settings.folderRoots, outbound, secrets }),
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

/** A reader built by its first call: `build` runs once, when the sync lists or reads. */
function readerOnFirstUse(build: () => Promise<SourceReader>): SourceReader {
  const reader = lazy(build);
  return {
    async *list() {
      yield* (await reader.get()).list();
    },
    async read(entry, known) {
      return (await reader.get()).read(entry, known);
    },
  };
}
