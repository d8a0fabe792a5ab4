import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TopicSpec } from '../ports/message-log/message-log.port.ts';
import type { EventSchema } from './event-schema.ts';

/** Fields every pipeline event carries. */
export interface EventBase {
  event_id: string;
  occurred_at: string;
  trace_id: string;
  document_id: string;
  workspace_id: string;
  version: number;
}

export interface DocumentUploaded extends EventBase {
  storage_key: string;
  mime_type: string;
  size_bytes: number;
  content_hash: string;
  name: string;
}
export interface DocumentParsed extends EventBase {
  text_ref: string;
  mime_type: string;
  characters: number;
  pages: number | null;
}
export interface DocumentChunked extends EventBase {
  chunks_ref: string;
  chunk_count: number;
  tokens: number;
}
export interface DocumentEmbedded extends EventBase {
  chunks_ref: string;
  chunk_count: number;
  tokens: number;
  model: string;
  dimensions: number;
  embedded_count: number;
  cached_count: number;
}
export interface DocumentIndexed extends EventBase {
  chunk_count: number;
  tokens: number;
  model: string | null;
  served: boolean;
}
export interface DocumentFailed extends EventBase {
  stage: string;
  error_code: string;
  error_message: string;
  attempts: number;
}
export interface DeadLetter {
  event_id: string;
  occurred_at: string;
  stage: string;
  source_topic: string;
  source_partition: number;
  source_offset: string;
  key: string;
  payload: string;
  error_code: string;
  error_message: string;
  attempts: number;
}

/** The record of an operator's replay of a dead letter (`kb.dlq.replays`). */
export interface DeadLetterReplay {
  event_id: string;
  occurred_at: string;
  dead_letter_id: string;
  stage: string;
  document_id: string;
  workspace_id: string;
  version: number;
  outcome: 'replayed' | 'skipped';
  detail: string;
  replayed_by: string;
}

/** Event types, versioned; the topic of each is `<KB_TOPIC_PREFIX><event type>`. */
export const EVENT_TYPES = {
  uploaded: 'kb.document.uploaded',
  parsed: 'kb.document.parsed',
  chunked: 'kb.document.chunked',
  embedded: 'kb.document.embedded',
  indexed: 'kb.document.indexed',
  failed: 'kb.document.failed',
  /** Notifications for clients (webhooks, the event stream): see `notifications.ts`. */
  notification: 'kb.notification',
} as const;
export type EventKind = keyof typeof EVENT_TYPES;

const SCHEMA_FILES: Record<EventKind | 'deadLetter' | 'deadLetterReplay', string> = {
  uploaded: 'document-uploaded.avsc',
  parsed: 'document-parsed.avsc',
  chunked: 'document-chunked.avsc',
  embedded: 'document-embedded.avsc',
  indexed: 'document-indexed.avsc',
  failed: 'document-failed.avsc',
  notification: 'notification.avsc',
  deadLetter: 'dead-letter.avsc',
  deadLetterReplay: 'dead-letter-replay.avsc',
};

const schemaCache = new Map<string, EventSchema>();

/** The Avro schema of an event kind, read from `schemas/`. */
export function eventSchema(kind: EventKind | 'deadLetter' | 'deadLetterReplay'): EventSchema {
  const file = SCHEMA_FILES[kind];
  let schema = schemaCache.get(file);
  if (!schema) {
    const url = new URL(`../../schemas/${file}`, import.meta.url);
    schema = JSON.parse(readFileSync(fileURLToPath(url), 'utf8')) as EventSchema;
    schemaCache.set(file, schema);
  }
  return schema;
}

export const STAGE_NAMES = ['parse', 'chunk', 'embed', 'index'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** Topic names of one deployment (all carry the configured prefix). */
export interface Topics {
  readonly uploaded: string;
  readonly parsed: string;
  readonly chunked: string;
  readonly embedded: string;
  readonly indexed: string;
  readonly failed: string;
  /** Notification events for clients; keyed by subject (a document id). */
  readonly notification: string;
  /** The webhook dispatcher's consumer group. */
  readonly webhooksGroup: string;
  deadLetter(stage: StageName): string;
  /** Records of dead letters replayed by operators (one partition, every stage). */
  readonly deadLetterReplays: string;
  group(stage: StageName): string;
}

export function topicNames(prefix: string): Topics {
  return {
    uploaded: `${prefix}${EVENT_TYPES.uploaded}`,
    parsed: `${prefix}${EVENT_TYPES.parsed}`,
    chunked: `${prefix}${EVENT_TYPES.chunked}`,
    embedded: `${prefix}${EVENT_TYPES.embedded}`,
    indexed: `${prefix}${EVENT_TYPES.indexed}`,
    failed: `${prefix}${EVENT_TYPES.failed}`,
    notification: `${prefix}${EVENT_TYPES.notification}`,
    webhooksGroup: `${prefix}kb.webhooks.dispatch`,
    deadLetter: (stage) => `${prefix}kb.dlq.${stage}`,
    deadLetterReplays: `${prefix}kb.dlq.replays`,
    group: (stage) => `${prefix}kb.stage.${stage}`,
  };
}

/** The topic each stage consumes. */
export function stageInputTopic(topics: Topics, stage: StageName): string {
  const inputs: Record<StageName, string> = {
    parse: topics.uploaded,
    chunk: topics.parsed,
    embed: topics.chunked,
    index: topics.embedded,
  };
  return inputs[stage];
}

/** Every topic the pipeline uses, with its schema, for `MessageLog.ensureTopics`. */
export function topicSpecs(prefix: string, partitions: number): TopicSpec[] {
  const t = topicNames(prefix);
  const specs: TopicSpec[] = (Object.keys(EVENT_TYPES) as EventKind[]).map((kind) => ({
    name: t[kind],
    partitions,
    schema: eventSchema(kind),
  }));
  for (const stage of STAGE_NAMES) {
    specs.push({ name: t.deadLetter(stage), partitions: 1, schema: eventSchema('deadLetter') });
  }
  specs.push({ name: t.deadLetterReplays, partitions: 1, schema: eventSchema('deadLetterReplay') });
  return specs;
}
