import {
  type ClickHouseAccountStoreOptions,
  connect,
  createClickHouseContext,
  ensureDatabase,
  storeError,
} from '../account-store/clickhouse-context.ts';
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

/** The ClickHouse server and database (the account store's, by default). */
export type ClickHouseWebhookStoreOptions = ClickHouseAccountStoreOptions;

/**
 * Idempotent schema statements. Every table is a `ReplacingMergeTree(revision)`: a change is a new
 * row with a higher revision and reads use `FINAL`, so the newest state of each row wins.
 * Endpoints are removed by a tombstone row (`deleted = 1`).
 */
const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id String,
    workspace_id String,
    url String,
    events String,
    description Nullable(String),
    secret String,
    enabled UInt8,
    disabled_reason Nullable(String),
    failing_since_ms Nullable(Int64),
    created_at_ms Int64,
    updated_at_ms Int64,
    deleted UInt8,
    revision UInt64
  ) ENGINE = ReplacingMergeTree(revision)
  ORDER BY (workspace_id, id)`,
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id String,
    endpoint_id String,
    workspace_id String,
    event_id String,
    event_type LowCardinality(String),
    subject String,
    payload String,
    seq Int64,
    status LowCardinality(String),
    attempts UInt32,
    next_attempt_at_ms Nullable(Int64),
    created_at_ms Int64,
    updated_at_ms Int64,
    delivered_at_ms Nullable(Int64),
    revision UInt64,
    INDEX webhook_deliveries_endpoint endpoint_id TYPE bloom_filter GRANULARITY 1
  ) ENGINE = ReplacingMergeTree(revision)
  ORDER BY id`,
  `CREATE TABLE IF NOT EXISTS webhook_attempts (
    delivery_id String,
    attempt UInt32,
    at_ms Int64,
    status_code Nullable(UInt16),
    error Nullable(String),
    duration_ms UInt32
  ) ENGINE = ReplacingMergeTree
  ORDER BY (delivery_id, attempt)`,
];

/** Deliveries removed per statement by `pruneDeliveries`. */
const PRUNE_BATCH = 1_000;

const ENDPOINT_COLUMNS =
  'id, workspace_id, url, events, description, secret, enabled, disabled_reason, failing_since_ms, created_at_ms, updated_at_ms';
const DELIVERY_COLUMNS =
  'id, endpoint_id, workspace_id, event_id, event_type, subject, payload, seq, status, attempts, next_attempt_at_ms, created_at_ms, updated_at_ms, delivered_at_ms';

/**
 * The webhook store in ClickHouse, beside the account store (the distributed runtime's control
 * data: endpoints are workspace settings like keys, attempts an append-only history). Every read
 * is `FINAL`, so a write is visible to every later read of any process. Revisions come from this
 * process's clock, made strictly increasing; two processes writing one row in the same
 * millisecond may keep either write (last write wins, within clock skew).
 */
export async function createClickHouseWebhookStore(options: ClickHouseWebhookStoreOptions): Promise<WebhookStore> {
  await ensureDatabase(options);
  const client = connect(options, options.database);
  try {
    for (const statement of SCHEMA) await client.command({ query: statement });
  } catch (error) {
    await client.close();
    throw storeError(error, 'creating the webhook tables');
  }
  const { select, insert, command } = createClickHouseContext(client);
  let lastRevision = 0;
  const revision = () => {
    lastRevision = Math.max(Date.now() * 1000, lastRevision + 1);
    return lastRevision;
  };
  const endpoints = (filter: string, params: Record<string, unknown>) =>
    select<EndpointRow>(
      'reading webhook endpoints',
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints FINAL WHERE deleted = 0 AND ${filter} ORDER BY created_at_ms, id`,
      params,
    ).then((rows) => rows.map(toEndpoint));
  const deliveries = (filter: string, params: Record<string, unknown>, order: string) =>
    select<DeliveryRow>(
      'reading webhook deliveries',
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries FINAL WHERE ${filter} ORDER BY ${order}`,
      params,
    ).then((rows) => rows.map(toDelivery));

  return {
    async createEndpoint(endpoint) {
      await insert('creating a webhook endpoint', 'webhook_endpoints', [
        { ...endpointRow(endpoint), deleted: 0, revision: revision() },
      ]);
    },
    async getEndpoint(workspaceId, id) {
      const found = await endpoints('workspace_id = {ws:String} AND id = {id:String}', { ws: workspaceId, id });
      return found[0] ?? null;
    },
    listEndpoints: (workspaceId) => endpoints('workspace_id = {ws:String}', { ws: workspaceId }),
    async updateEndpoint(endpoint) {
      const current = await endpoints('workspace_id = {ws:String} AND id = {id:String}', {
        ws: endpoint.workspaceId,
        id: endpoint.id,
      });
      if (current.length === 0) return false;
      await insert('updating a webhook endpoint', 'webhook_endpoints', [
        { ...endpointRow(endpoint), deleted: 0, revision: revision() },
      ]);
      return true;
    },
    async deleteEndpoint(workspaceId, id) {
      const current = await endpoints('workspace_id = {ws:String} AND id = {id:String}', { ws: workspaceId, id });
      const endpoint = current[0];
      if (!endpoint) return false;
      await insert('removing a webhook endpoint', 'webhook_endpoints', [
        { ...endpointRow(endpoint), deleted: 1, revision: revision() },
      ]);
      return true;
    },

    async enqueueDeliveries(list) {
      if (list.length === 0) return;
      const existing = await select<{ id: string }>(
        'reading webhook deliveries',
        'SELECT id FROM webhook_deliveries WHERE id IN {ids:Array(String)}',
        { ids: list.map((d) => d.id) },
      );
      const known = new Set(existing.map((r) => r.id));
      const fresh = list.filter((d) => !known.has(d.id));
      await insert(
        'enqueueing webhook deliveries',
        'webhook_deliveries',
        fresh.map((d) => ({ ...deliveryRow(d), revision: revision() })),
      );
    },
    async getDelivery(workspaceId, id) {
      const found = await deliveries('workspace_id = {ws:String} AND id = {id:String}', { ws: workspaceId, id }, 'seq');
      return found[0] ?? null;
    },
    async listPendingDeliveries(perEndpoint) {
      const rows = await select<DeliveryRow>(
        'reading pending webhook deliveries',
        `SELECT * FROM (
           SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries FINAL WHERE status = 'pending'
           ORDER BY endpoint_id, seq LIMIT {per:UInt32} BY endpoint_id
         ) ORDER BY seq`,
        { per: perEndpoint },
      );
      return rows.map(toDelivery);
    },
    listDeliveries: (workspaceId, endpointId, limit) =>
      deliveries(
        'workspace_id = {ws:String} AND endpoint_id = {ep:String}',
        { ws: workspaceId, ep: endpointId, limit },
        'seq DESC LIMIT {limit:UInt32}',
      ),
    async saveDelivery(delivery) {
      await insert('saving a webhook delivery', 'webhook_deliveries', [
        { ...deliveryRow(delivery), revision: revision() },
      ]);
    },
    async recordAttempt(attempt) {
      await insert('recording a webhook attempt', 'webhook_attempts', [{ ...attemptRow(attempt) }]);
    },
    async listAttempts(ids) {
      if (ids.length === 0) return [];
      const rows = await select<AttemptRow>(
        'reading webhook attempts',
        `SELECT delivery_id, attempt, at_ms, status_code, error, duration_ms FROM webhook_attempts FINAL
         WHERE delivery_id IN {ids:Array(String)} ORDER BY delivery_id, attempt`,
        { ids: [...ids] },
      );
      return rows.map(toAttempt);
    },
    async pruneDeliveries(beforeMs) {
      // Only rows (revisions) older than the cut are deleted, so a delivery saved again meanwhile
      // (a retry) keeps its newest revision.
      const settled = await select<{ id: string }>(
        'reading settled webhook deliveries',
        `SELECT id FROM webhook_deliveries FINAL
         WHERE status != 'pending' AND updated_at_ms < {before:Int64}`,
        { before: beforeMs },
      );
      if (settled.length === 0) return 0;
      const ids = settled.map((row) => row.id);
      for (let i = 0; i < ids.length; i += PRUNE_BATCH) {
        const batch = ids.slice(i, i + PRUNE_BATCH);
        await command(
          'pruning webhook deliveries',
          'DELETE FROM webhook_deliveries WHERE id IN {ids:Array(String)} AND updated_at_ms < {before:Int64}',
          { ids: batch, before: beforeMs },
        );
        await command(
          'pruning webhook attempts',
          'DELETE FROM webhook_attempts WHERE delivery_id IN {ids:Array(String)}',
          {
            ids: batch,
          },
        );
      }
      return ids.length;
    },
    async pendingSummary() {
      const rows = await select<{ count: number; oldest: number | null }>(
        'summing pending webhook deliveries',
        `SELECT count() AS count, if(count() = 0, NULL, min(created_at_ms)) AS oldest
         FROM webhook_deliveries FINAL WHERE status = 'pending'`,
      );
      const row = rows[0];
      return {
        count: Number(row?.count ?? 0),
        oldestCreatedAtMs: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
      };
    },
    async ping() {
      await select('pinging ClickHouse', 'SELECT 1');
    },
    async close() {
      await client.close();
    },
  };
}
