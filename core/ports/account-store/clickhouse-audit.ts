import { type AuditRow, instant, toAuditEntry, toAuditInsertRow } from './account-rows.ts';
import type { AccountStore, AuditQuery } from './account-store.port.ts';
import { type ClickHouseContext, dateTime64, type QueryParams } from './clickhouse-context.ts';
import { createInsertBuffer, type InsertBufferOptions } from './clickhouse-insert-buffer.ts';

const AUDIT_COLUMNS =
  'id, workspace_id, document_id, action, actor_type, actor_id, actor_name, timestamp, version, before_json, after_json, change_reason, trace_id';

/** How audit entries are buffered before they are inserted (see `createInsertBuffer`). */
export type AuditBufferOptions = Omit<InsertBufferOptions, 'onRefused'>;

export const DEFAULT_AUDIT_BUFFER: AuditBufferOptions = { flushMs: 25, maxRows: 1_000, maxHeldRows: 100_000 };

/**
 * The audit-log part of the ClickHouse account store (see `createClickHouseAccountStore`).
 * Entries appended at about the same time share one insert (a part for ClickHouse to write and
 * merge): a flush interval after the first, or at 1,000 entries. `appendAudit` resolves once its
 * entry is written, or, while ClickHouse is unavailable, held to be written when it is back.
 * `listAudit` writes what this store holds first, so it sees every entry appended before it;
 * `close` writes what is held.
 */
export function createClickHouseAudit(
  { select, insert }: ClickHouseContext,
  bufferOptions: AuditBufferOptions = DEFAULT_AUDIT_BUFFER,
): Pick<AccountStore, 'appendAudit' | 'listAudit'> & { close(): Promise<void> } {
  const buffer = createInsertBuffer((rows) => insert('appending audit entries', 'audit_log', rows), {
    ...bufferOptions,
    onRefused: (rows, error) =>
      process.emitWarning(
        `ClickHouse refused ${rows.length} audit entr${rows.length === 1 ? 'y' : 'ies'} (${rows.map((r) => String(r.id)).join(', ')}): ${error instanceof Error ? error.message : String(error)}`,
        { code: 'KB_AUDIT_REFUSED' },
      ),
  });

  return {
    async appendAudit(entry) {
      await buffer.add([{ ...toAuditInsertRow(entry), at: dateTime64(instant(entry.timestamp, 'timestamp')) }]);
    },

    close: () => buffer.close(),

    async listAudit(query: AuditQuery) {
      await buffer.flush();
      const where = ['workspace_id = {workspaceId:String}'];
      const params: QueryParams = { workspaceId: query.workspaceId };
      if (query.documentId !== undefined) {
        where.push('document_id = {documentId:String}');
        params.documentId = query.documentId;
      }
      if (query.action !== undefined) {
        where.push('action = {action:String}');
        params.action = query.action;
      }
      if (query.since !== undefined) {
        where.push(`at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`);
        params.since = instant(query.since, 'since');
      }
      if (query.until !== undefined) {
        where.push(`at <= fromUnixTimestamp64Milli({until:Int64}, 'UTC')`);
        params.until = instant(query.until, 'until');
      }
      const filter = where.join(' AND ');
      const bounds = [
        ...(query.afterId === undefined ? [] : ['id > {afterId:String}']),
        ...(query.beforeId === undefined ? [] : ['id < {beforeId:String}']),
      ];
      const pageFilter = [filter, ...bounds].join(' AND ');
      const limit = Math.max(0, Math.floor(query.limit));
      const order = query.order === 'desc' ? 'DESC' : 'ASC';
      const [rows, totals] = await Promise.all([
        select<AuditRow>(
          'listing audit entries',
          `SELECT ${AUDIT_COLUMNS} FROM audit_log FINAL WHERE ${pageFilter} ORDER BY id ${order} LIMIT {limit:UInt32}`,
          {
            ...params,
            ...(query.afterId === undefined ? {} : { afterId: query.afterId }),
            ...(query.beforeId === undefined ? {} : { beforeId: query.beforeId }),
            limit,
          },
        ),
        select<{ n: number }>(
          'counting audit entries',
          `SELECT count() AS n FROM audit_log FINAL WHERE ${filter}`,
          params,
        ),
      ]);
      return { entries: rows.map(toAuditEntry), total: Number(totals[0]?.n ?? 0) };
    },
  };
}
