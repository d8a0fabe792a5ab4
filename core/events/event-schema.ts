/**
 * The schema of one event type as the events module defines it: the parsed JSON of its Avro
 * `.avsc` file in `schemas/` (see `eventSchema`). The message-log port carries it with a topic
 * without looking inside; each adapter documents how it applies it (both validate and encode with
 * Avro: the SQLite log with `avsc`, the Kafka log through the schema registry).
 */
export type EventSchema = Readonly<Record<string, unknown>>;
