import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Schema as AvscSchema, Type as AvscType } from 'avsc';
import avro from 'avsc';
import { KbError } from '../../../errors/kb-error.ts';
import { type Database, migrate, openDatabase } from '../../sqlite/open-database.ts';
import {
  defaultOnError,
  logSettings,
  type MessageLogErrorContext,
  type SqliteLogSettings,
  type SqliteMessageLogOptions,
} from './sqlite-log-options.ts';
import { type LogStatements, MESSAGE_LOG_MIGRATIONS, prepareLogStatements } from './sqlite-log-schema.ts';

/** A subscription the log must end when it is closed under it. */
export interface OpenSubscription {
  closeAbruptly(): void;
}

/** What the parts of one SQLite message log share: its database, statements, settings and open state. */
export interface SqliteLogContext {
  readonly db: Database;
  readonly q: LogStatements;
  /** The log's resolved file: consumers of the same file in this process are woken by its publishes. */
  readonly file: string;
  readonly settings: SqliteLogSettings;
  /** Reports an adapter-level failure; a failing reporter never stops the caller. */
  readonly onError: (error: unknown, context: MessageLogErrorContext) => void;
  readonly subscriptions: Set<OpenSubscription>;
  isClosed(): boolean;
  /** Rejects every operation after `close()`. */
  assertOpen(): void;
  markClosed(): void;
  /** The Avro type of a schema the log recorded (cached). */
  typeOf(schemaId: number): AvscType;
}

export function openLogContext(options: SqliteMessageLogOptions): SqliteLogContext {
  const file = options.file === ':memory:' ? `:memory:${randomUUID()}` : path.resolve(options.file);
  const settings = logSettings(options);
  const reportError = options.onError ?? defaultOnError;
  const onError = (error: unknown, context: MessageLogErrorContext): void => {
    try {
      reportError(error, context);
    } catch {
      // A failing reporter must not stop the consumer.
    }
  };

  const db: Database = openDatabase(options.file);
  migrate(db, 'message-log-001', MESSAGE_LOG_MIGRATIONS);
  const q = prepareLogStatements(db);

  const types = new Map<number, AvscType>();
  function typeOf(schemaId: number): AvscType {
    let type = types.get(schemaId);
    if (!type) {
      const row = q.schemaById.get(schemaId);
      if (!row) throw new KbError('internal-error', `Schema ${schemaId} of the message log is missing`);
      type = avro.Type.forSchema(JSON.parse(row.schema) as AvscSchema);
      types.set(schemaId, type);
    }
    return type;
  }

  let closed = false;
  return {
    db,
    q,
    file,
    settings,
    onError,
    subscriptions: new Set(),
    isClosed: () => closed,
    assertOpen() {
      if (closed) throw new KbError('service-unavailable', 'The message log is closed');
    },
    markClosed() {
      closed = true;
    },
    typeOf,
  };
}
