import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Schema as AvscSchema, Type as AvscType } from 'avsc';
import avro from 'avsc';
import { describeError } from '../../errors/describe-error.ts';
import { engineUnavailable, KbError } from '../../errors/kb-error.ts';
import type { EventSchema } from '../../events/event-schema.ts';
import { countEngineRequest } from '../../util/engine-requests.ts';
import { isRegistryUnavailable, registryError, registryStatus, SCHEMA_REGISTRY, withTimeout } from './kafka-errors.ts';

/** Subject compatibility levels of a Confluent-compatible schema registry. */
export type SchemaCompatibility = keyof typeof COMPATIBILITY;

/** The value schema a topic's messages are written with. */
export interface TopicSchema {
  /** Registry id, carried in every message (Confluent wire format). */
  readonly id: number;
  /** The schema as an avsc type, for validation before anything is sent. */
  readonly type: AvscType;
}

export interface TopicSchemasOptions {
  /** Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:8081` or Apicurio's `.../apis/ccompat/v7`. */
  readonly url: string;
  readonly compatibility: SchemaCompatibility;
  /** Longest wait for one registry call (the client's own retries included). */
  readonly requestTimeoutMs: number;
  readonly clientId: string;
}

/**
 * The topics' Avro value schemas in a Confluent-compatible schema registry, subject `<topic>-value`
 * (TopicNameStrategy), encoded in the Confluent wire format (magic byte 0, 4-byte schema id, Avro
 * binary) by `@kafkajs/confluent-schema-registry`.
 */
export interface TopicSchemas {
  subject(topic: string): string;
  /** Sets the subject's compatibility level, registers the schema (idempotent) and caches its id. */
  register(topic: string, schema: EventSchema): Promise<TopicSchema>;
  /** The schema this process registered for the topic, else the subject's latest version; `not-found` without one. */
  forTopic(topic: string): Promise<TopicSchema>;
  encode(schema: TopicSchema, value: Record<string, unknown>): Promise<Buffer>;
  /**
   * Decodes a message with the schema it was written with. Rejects with `invalid-event` when the
   * bytes are not a decodable registry-encoded Avro value, `engine-unavailable` when the registry
   * cannot be asked.
   */
  decode(bytes: Buffer | null): Promise<Record<string, unknown>>;
  /** The subject's compatibility level, or null when the subject has no own level. */
  compatibility(topic: string): Promise<string | null>;
  /** Deletes the subject (soft, then permanently); a missing subject is fine. */
  deleteSubject(topic: string): Promise<void>;
  ping(timeoutMs: number): Promise<void>;
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

/** The level in a `GET /config[/subject]` answer (`compatibilityLevel`, or `compatibility` on some registries). */
function levelOf(answer: unknown): string | null {
  if (answer === null || typeof answer !== 'object') return null;
  const { compatibilityLevel, compatibility } = answer as { compatibilityLevel?: unknown; compatibility?: unknown };
  const level = compatibilityLevel ?? compatibility;
  return typeof level === 'string' ? level.toUpperCase() : null;
}

/** avsc values of records are class instances; consumers get plain objects. */
function toPlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return value.map(toPlain);
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = toPlain(inner);
  return out;
}

function isAvscType(value: unknown): value is AvscType {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AvscType).isValid === 'function' &&
    typeof (value as AvscType).toBuffer === 'function'
  );
}

/** Registrations sent at most for one `register`, each within the request timeout (see below). */
const REGISTER_ATTEMPTS = 3;

export function createTopicSchemas(options: TopicSchemasOptions): TopicSchemas {
  const base = options.url.replace(/\/+$/, '');
  const registry = new SchemaRegistry({
    host: base,
    clientId: options.clientId,
    retry: { retries: 2, initialRetryTimeInSecs: 0.1, maxRetryTimeInSecs: 1 },
    // Counts each request the client sends (its own id and subject caches answer the rest).
    middlewares: [
      () => ({
        request(request) {
          countEngineRequest('schema-registry', `${request.method().toUpperCase()} client`);
          return request;
        },
      }),
    ],
  });
  const cache = new Map<string, TopicSchema>();
  const subject = (topic: string) => `${topic}-value`;
  const timed = <T>(promise: Promise<T>, what: string) =>
    withTimeout(promise, options.requestTimeoutMs, `The schema registry (${what})`, SCHEMA_REGISTRY);

  /** A plain HTTP call for the endpoints the registry client does not wrap. */
  async function call(method: string, path: string, action: string, body?: unknown): Promise<unknown> {
    let response: Response;
    countEngineRequest('schema-registry', method);
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { accept: CONTENT_TYPE, ...(body === undefined ? {} : { 'content-type': CONTENT_TYPE }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.requestTimeoutMs),
      });
    } catch (error) {
      throw engineUnavailable(
        SCHEMA_REGISTRY,
        `The schema registry is unavailable (could not ${action}): ${describeError(error)}`,
        error,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      let detail = text.trim() || `HTTP status ${response.status} without a message`;
      try {
        detail = String((JSON.parse(text) as { message?: unknown }).message ?? detail);
      } catch {
        // Not JSON: keep the text.
      }
      const failure = Object.assign(new Error(detail), { name: 'ResponseError', status: response.status });
      throw registryError(failure, action);
    }
    return text ? (JSON.parse(text) as unknown) : null;
  }

  /** The id the subject holds `schema` under, or undefined when it does not hold it. */
  async function registeredId(name: string, schema: string): Promise<number | undefined> {
    try {
      const found = (await call('POST', `/subjects/${encodeURIComponent(name)}`, `look up a schema of ${name}`, {
        schema,
      })) as { id?: unknown } | null;
      return typeof found?.id === 'number' ? found.id : undefined;
    } catch (error) {
      if (error instanceof KbError && error.code === 'not-found') return undefined;
      throw error;
    }
  }

  /** The subject's own compatibility level; null when it has none (404, or Apicurio's echo of the global level). */
  async function ownLevel(name: string): Promise<string | null> {
    let answer: unknown;
    try {
      answer = await call('GET', `/config/${encodeURIComponent(name)}`, `read the compatibility of subject ${name}`);
    } catch (error) {
      if (error instanceof KbError && error.code === 'not-found') return null;
      throw error;
    }
    const level = levelOf(answer);
    if (level === null) return null;
    globalLevel ??= levelOf(await call('GET', '/config', 'read the global compatibility level'));
    return level === globalLevel && level !== options.compatibility ? null : level;
  }
  let globalLevel: string | null | undefined;

  function conflictingLevel(name: string, held: string): KbError {
    return new KbError(
      'config-invalid',
      `Subject ${name} has compatibility ${held} in the schema registry, but this service sets ${options.compatibility}: ` +
        `set the subject's level back to ${options.compatibility} (PUT /config/${name}) or delete it (DELETE /config/${name}), then start again.`,
      { retriable: false },
    );
  }

  /**
   * Makes the subject's level the configured one. Idempotent under concurrency: a level already
   * set (by this process earlier or by another starting at the same moment) is success; a
   * different level someone chose is a `config-invalid` error naming both.
   */
  async function ensureLevel(name: string): Promise<void> {
    const held = await ownLevel(name);
    if (held === options.compatibility) return;
    if (held !== null) throw conflictingLevel(name, held);
    try {
      await call('PUT', `/config/${encodeURIComponent(name)}`, `set the compatibility of subject ${name}`, {
        compatibility: options.compatibility,
      });
    } catch (error) {
      // Apicurio answers 409 "A rule named 'COMPATIBILITY' already exists" to the loser of two
      // processes setting the level at once: what the winner set decides.
      if (!(error instanceof KbError && error.code === 'conflict')) throw error;
      const now = await ownLevel(name);
      if (now !== options.compatibility) throw conflictingLevel(name, now ?? 'none');
    }
  }

  return {
    subject,

    async register(topic, schema) {
      let type: AvscType;
      try {
        type = avro.Type.forSchema(schema as AvscSchema);
      } catch (error) {
        throw new KbError('bad-request', `Topic ${topic} has an invalid Avro schema: ${(error as Error).message}`);
      }
      const name = subject(topic);
      // Set the level first: the registry client compares the subject's level with the requested
      // one before registering, and Apicurio answers an existing subject without its own level
      // with the global default (NONE) instead of 404, which the client would reject.
      await ensureLevel(name);
      const raw = { type: SchemaType.AVRO, schema: JSON.stringify(schema) } as const;
      let id: number | undefined;
      try {
        for (let attempt = 1; id === undefined; attempt += 1) {
          try {
            ({ id } = await timed(
              registry.register(raw, { subject: name, compatibility: COMPATIBILITY[options.compatibility] }),
              `register ${name}`,
            ));
          } catch (error) {
            // Registering is idempotent (the same schema answers the same id), so a registration
            // whose answer did not arrive in time is sent again: the registry has been seen to
            // register a schema at once and the client to wait out the whole timeout for the answer.
            const timedOut = error instanceof KbError && error.code === 'engine-unavailable';
            if (!timedOut || attempt >= REGISTER_ATTEMPTS) throw error;
          }
        }
      } catch (error) {
        const mapped = registryError(error, `register the schema of subject ${name}`);
        if (registryStatus(error) === 409) {
          // Another process registering the same schema at the same moment can make this one's
          // registration collide; the schema is then there, under the id it got.
          id = await registeredId(name, raw.schema);
          if (id === undefined) {
            throw new KbError(
              'conflict',
              `The schema for topic ${topic} is not ${options.compatibility} compatible with the versions registered under ${name}: ${mapped.message}`,
              { cause: error, retriable: false },
            );
          }
        } else {
          throw mapped;
        }
      }
      const registered = { id, type };
      cache.set(topic, registered);
      return registered;
    },

    async forTopic(topic) {
      const cached = cache.get(topic);
      if (cached) return cached;
      const name = subject(topic);
      try {
        const id = await timed(registry.getLatestSchemaId(name), `latest ${name}`);
        const type = await timed(registry.getSchema(id), `schema ${id}`);
        if (!isAvscType(type)) {
          throw new KbError('internal-error', `Subject ${name} does not hold an Avro schema`);
        }
        const found = { id, type };
        cache.set(topic, found);
        return found;
      } catch (error) {
        if (registryStatus(error) === 404) {
          throw new KbError('not-found', `Topic ${topic} has no registered schema (subject ${name})`, { cause: error });
        }
        throw registryError(error, `look up the schema of topic ${topic}`);
      }
    },

    async encode(schema, value) {
      try {
        return await timed(registry.encode(schema.id, value), `schema ${schema.id}`);
      } catch (error) {
        if (isRegistryUnavailable(error)) throw registryError(error, `encode with schema ${schema.id}`);
        throw new KbError(
          'invalid-event',
          `Value cannot be encoded with schema ${schema.id}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    },

    async decode(bytes) {
      if (!bytes || bytes.length < 5) {
        throw new KbError('invalid-event', 'Message value is not in the registry wire format (too short)');
      }
      try {
        const decoded = await timed(registry.decode(bytes) as Promise<unknown>, `schema ${bytes.readInt32BE(1)}`);
        if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) {
          throw new KbError('invalid-event', 'Message value is not an Avro record');
        }
        return toPlain(decoded) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof KbError) throw error;
        if (isRegistryUnavailable(error)) throw registryError(error, 'fetch the schema of a message');
        throw new KbError('invalid-event', `Message value cannot be decoded: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },

    async compatibility(topic) {
      const name = subject(topic);
      try {
        const level = (await call('GET', `/config/${encodeURIComponent(name)}`, `read the level of ${name}`)) as {
          compatibilityLevel?: string;
        } | null;
        return level?.compatibilityLevel ?? null;
      } catch (error) {
        if (error instanceof KbError && error.code === 'not-found') return null;
        throw error;
      }
    },

    async deleteSubject(topic) {
      const name = subject(topic);
      cache.delete(topic);
      const path = `/subjects/${encodeURIComponent(name)}`;
      for (const suffix of ['', '?permanent=true']) {
        try {
          await call('DELETE', `${path}${suffix}`, `delete subject ${name}`);
        } catch (error) {
          if (!(error instanceof KbError && error.code === 'not-found')) throw error;
        }
      }
    },

    async ping(timeoutMs) {
      await withTimeout(call('GET', '/config', 'answer a ping'), timeoutMs, 'The schema registry', SCHEMA_REGISTRY);
    },
  };
}
