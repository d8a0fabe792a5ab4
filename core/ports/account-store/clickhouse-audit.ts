import { createGroupCommit } from '../../util/group-commit.ts';
import { type AuditRow, instant, toAuditEntry, toAuditInsertRow } from './account-rows.ts';
import type { AccountStore, AuditQuery } from './account-store.port.ts';
import { type ClickHouseContext, dateTime64, type QueryParams } from './clickhouse-context.ts';

const AUDIT_COLUMNS =
  'id, workspace_id, document_id, action, actor_type, actor_id, timestamp, version, before_json, after_json, change_reason, trace_id';

/** The audit-log part of the ClickHouse account store (see `createClickHouseAccountStore`). */
export function createClickHouseAudit({
  select,
  insert,
}: ClickHouseContext): Pick<AccountStore, 'appendAudit' | 'listAudit'> {
  // Group commit: an entry appended while an insert is in flight joins the next insert, so each
  // insert (a new part for ClickHouse to write and merge) carries every entry that waited for it;
  // one entry the engine refuses fails alone.
  const append = createGroupCommit<Record<string, unknown>>(
    (rows) => insert('appending an audit entry', 'audit_log', rows),
    { isolateFailures: true },
  );

  return {
    async appendAudit(entry) {
      await append({ ...toAuditInsertRow(entry), at: dateTime64(instant(entry.timestamp, 'timestamp')) });
    },

    async listAudit(query: AuditQuery) {
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
