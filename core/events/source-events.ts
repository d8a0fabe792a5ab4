import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TopicSpec } from '../ports/message-log/message-log.port.ts';
import type { EventSchema } from './event-schema.ts';

/** A claimed sync run, handed to whichever process of the consumer group takes it (distributed runtime). */
export interface SourceSyncRequested {
  event_id: string;
  occurred_at: string;
  trace_id: string;
  workspace_id: string;
  source_id: string;
  run_id: string;
}

export const SOURCE_SYNC_EVENT = 'kb.source.sync-requested';

/** The topic of sync requests and the consumer group of the processes that run them. */
export function sourceSyncTopics(prefix: string): { readonly topic: string; readonly group: string } {
  return { topic: `${prefix}${SOURCE_SYNC_EVENT}`, group: `${prefix}kb.sources` };
}

let schema: EventSchema | undefined;

/** The sync-request topic with its Avro schema, for `MessageLog.ensureTopics`. Keyed by source id. */
export function sourceTopicSpecs(prefix: string, partitions: number): TopicSpec[] {
  schema ??= JSON.parse(
    readFileSync(fileURLToPath(new URL('../../schemas/source-sync-requested.avsc', import.meta.url)), 'utf8'),
  ) as EventSchema;
  return [{ name: sourceSyncTopics(prefix).topic, partitions, schema }];
}
