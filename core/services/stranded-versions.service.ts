/**
 * Versions left `pending` with no event to start their ingestion: a process killed between
 * recording a write (a new document or version, a reprocess, a metadata change about to be served
 * from the previous version's chunks) and publishing its `uploaded` event leaves its version
 * pending for ever. This service finds them and publishes the event again.
 */
import { v7 as uuidv7 } from 'uuid';
import type { Topics } from '../events/events.ts';
import { publishEvent } from '../events/publish-event.ts';
import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { MessageLog, MessageLogAdmin } from '../ports/message-log/message-log.port.ts';
import { uploadedEvent } from './version-writes.ts';

export interface StrandedVersionsDeps {
  readonly documents: DocumentStore;
  readonly log: MessageLog;
  readonly logAdmin: MessageLogAdmin;
  readonly topics: Topics;
  /** A version pending for longer than this, while the parse stage has nothing left to handle, is stranded. */
  readonly olderThanMs: number;
  readonly logger: Logger;
}

export interface StrandedVersionsService {
  /** Queues the stranded versions again; resolves with how many. */
  requeue(): Promise<number>;
}

/** Versions queued again per check, at most (the next check takes the rest). */
const BATCH = 200;

/**
 * The parse stage marks a version `processing` as it starts on its event (or settles it as
 * superseded or deleted), so once the parse consumer group has committed every `uploaded` event
 * (no lag), a version still `pending` whose event would have been published long before has none.
 * Its event is published again; the stages are idempotent, so a version whose event was merely
 * slow to be published (an engine outage in the middle of the request) is ingested once more at
 * worst. With a backlog (lag), nothing is done: the version's event may be in it.
 */
export function createStrandedVersionsService(deps: StrandedVersionsDeps): StrandedVersionsService {
  return {
    async requeue() {
      const lag = await deps.logAdmin.lag(deps.topics.group('parse'), deps.topics.uploaded);
      // No commit yet (null): the group has handled nothing so far, and the events may all be waiting.
      if (lag === null || lag > 0) return 0;
      const before = new Date(Date.now() - deps.olderThanMs).toISOString();
      const stranded = await deps.documents.listPendingVersions(before, BATCH);
      for (const version of stranded) {
        await publishEvent(deps.log, deps.topics.uploaded, version.documentId, uploadedEvent(version, uuidv7()));
      }
      if (stranded.length > 0) {
        deps.logger.warn(
          {
            versions: stranded.slice(0, 10).map((v) => `${v.documentId}:${v.version}`),
            count: stranded.length,
          },
          'queued again versions left pending without the event that starts their ingestion',
        );
      }
      return stranded.length;
    },
  };
}
