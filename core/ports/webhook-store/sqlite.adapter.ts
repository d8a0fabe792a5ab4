import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import {
  type AttemptRow,
  attemptRow,
  type DeliveryRow,
  deliveryRow,
  type EndpointRow,
  endpointRow,
  toAttempt,
  toDelivery,
  toEndpoint,
} from './webhook-rows.ts';
import type { WebhookStore } from './webhook-store.port.ts';

export interface SqliteWebhookStoreOptions {
  /** SQLite database file (created with its directory if missing), or `:memory:`. */
  readonly file: string;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS wh_endpoints (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    disabled_reason TEXT,
    failing_since_ms INTEGER,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS wh_endpoints_workspace ON wh_endpoints (workspace_id, created_at_ms, id)',
  `CREATE TABLE IF NOT EXISTS wh_deliveries (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at_ms INTEGER,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    delivered_at_ms INTEGER
  )`,
  'CREATE INDEX IF NOT EXISTS wh_deliveries_endpoint ON wh_deliveries (endpoint_id, seq)',
  `CREATE INDEX IF NOT EXISTS wh_deliveries_pending ON wh_deliveries (seq) WHERE status = 'pending'`,
  `CREATE TABLE IF NOT EXISTS wh_attempts (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
  )`,
];

const ENDPOINT_COLUMNS =
  'id, workspace_id, url, events, description, secret, enabled, disabled_reason, failing_since_ms, created_at_ms, updated_at_ms';
const DELIVERY_COLUMNS =
  'id, endpoint_id, workspace_id, event_id, event_type, subject, payload, seq, status, attempts, next_attempt_at_ms, created_at_ms, updated_at_ms, delivered_at_ms';
const named = (columns: string) =>
  columns
    .split(', ')
    .map((c) => `@${c}`)
    .join(', ');

/**
 * The webhook store in one SQLite file (the embedded runtime's `webhooks.db`). Every call is one
 * statement or one transaction, so a resolved write survives a process crash (WAL).
 */
export function createSqliteWebhookStore(options: SqliteWebhookStoreOptions): WebhookStore {
  const db: Database = openDatabase(options.file);
  migrate(db, 'webhook-store-001', MIGRATIONS);
  const insertEndpoint = db.prepare(
    `INSERT INTO wh_endpoints (${ENDPOINT_COLUMNS}) VALUES (${named(ENDPOINT_COLUMNS)})`,
  );
  const insertDelivery = db.prepare(
    `INSERT OR IGNORE INTO wh_deliveries (${DELIVERY_COLUMNS}) VALUES (${named(DELIVERY_COLUMNS)})`,
  );
  const replaceDelivery = db.prepare(
    `INSERT OR REPLACE INTO wh_deliveries (${DELIVERY_COLUMNS}) VALUES (${named(DELIVERY_COLUMNS)})`,
  );
  const enqueue = db.transaction((rows: DeliveryRow[]) => {
    for (const row of rows) insertDelivery.run(row);
  });
  const prune = db.transaction((beforeMs: number): number => {
    db.prepare(
      `DELETE FROM wh_attempts WHERE delivery_id IN
         (SELECT id FROM wh_deliveries WHERE status != 'pending' AND updated_at_ms < ?)`,
    ).run(beforeMs);
    return db.prepare(`DELETE FROM wh_deliveries WHERE status != 'pending' AND updated_at_ms < ?`).run(beforeMs)
      .changes;
  });
  let closed = false;

  return {
    async createEndpoint(endpoint) {
      insertEndpoint.run(endpointRow(endpoint));
    },
    async getEndpoint(workspaceId, id) {
      const row = db
        .prepare(`SELECT ${ENDPOINT_COLUMNS} FROM wh_endpoints WHERE workspace_id = ? AND id = ?`)
        .get(workspaceId, id) as EndpointRow | undefined;
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(workspaceId) {
      const rows = db
        .prepare(`SELECT ${ENDPOINT_COLUMNS} FROM wh_endpoints WHERE workspace_id = ? ORDER BY created_at_ms, id`)
        .all(workspaceId) as EndpointRow[];
      return rows.map(toEndpoint);
    },
    async updateEndpoint(endpoint) {
      const row = endpointRow(endpoint);
      const result = db
        .prepare(
          `UPDATE wh_endpoints SET url = @url, events = @events, description = @description, secret = @secret,
             enabled = @enabled, disabled_reason = @disabled_reason, failing_since_ms = @failing_since_ms,
             updated_at_ms = @updated_at_ms
           WHERE workspace_id = @workspace_id AND id = @id`,
        )
        .run(row);
      return result.changes > 0;
    },
    async deleteEndpoint(workspaceId, id) {
      return db.prepare('DELETE FROM wh_endpoints WHERE workspace_id = ? AND id = ?').run(workspaceId, id).changes > 0;
    },

    async enqueueDeliveries(deliveries) {
      enqueue(deliveries.map(deliveryRow));
    },
    async getDelivery(workspaceId, id) {
      const row = db
        .prepare(`SELECT ${DELIVERY_COLUMNS} FROM wh_deliveries WHERE workspace_id = ? AND id = ?`)
        .get(workspaceId, id) as DeliveryRow | undefined;
      return row ? toDelivery(row) : null;
    },
    async listPendingDeliveries(perEndpoint) {
      const rows = db
        .prepare(
          `SELECT ${DELIVERY_COLUMNS} FROM (
             SELECT *, ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY seq) AS rank
             FROM wh_deliveries WHERE status = 'pending'
           ) WHERE rank <= ? ORDER BY seq`,
        )
        .all(perEndpoint) as DeliveryRow[];
      return rows.map(toDelivery);
    },
    async listDeliveries(workspaceId, endpointId, limit) {
      const rows = db
        .prepare(
          `SELECT ${DELIVERY_COLUMNS} FROM wh_deliveries WHERE workspace_id = ? AND endpoint_id = ?
           ORDER BY seq DESC LIMIT ?`,
        )
        .all(workspaceId, endpointId, limit) as DeliveryRow[];
      return rows.map(toDelivery);
    },
    async saveDelivery(delivery) {
      replaceDelivery.run(deliveryRow(delivery));
    },
    async recordAttempt(attempt) {
      db.prepare(
        `INSERT OR REPLACE INTO wh_attempts (delivery_id, attempt, at_ms, status_code, error, duration_ms)
         VALUES (@delivery_id, @attempt, @at_ms, @status_code, @error, @duration_ms)`,
      ).run(attemptRow(attempt));
    },
    async listAttempts(deliveryIds) {
      if (deliveryIds.length === 0) return [];
      const rows = db
        .prepare(
          `SELECT delivery_id, attempt, at_ms, status_code, error, duration_ms FROM wh_attempts
           WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, attempt`,
        )
        .all(JSON.stringify(deliveryIds)) as AttemptRow[];
      return rows.map(toAttempt);
    },
    async pruneDeliveries(beforeMs) {
      return prune(beforeMs);
    },
    async pendingSummary() {
      const row = db
        .prepare(`SELECT COUNT(*) AS count, MIN(created_at_ms) AS oldest FROM wh_deliveries WHERE status = 'pending'`)
        .get() as { count: number; oldest: number | null };
      return { count: Number(row.count), oldestCreatedAtMs: row.oldest === null ? null : Number(row.oldest) };
    },

    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
