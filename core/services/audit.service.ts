import type { AuditEntry } from '../model/account-records.model.ts';
import type { AuditEntryView } from '../model/response-views.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import { decodeCursor, encodeCursor } from '../util/cursor.ts';
import type { AuditService } from './services.ts';

const isAfter = (v: unknown): v is { a: string } =>
  typeof v === 'object' && v !== null && typeof (v as { a: unknown }).a === 'string';

export function auditEntryView(e: AuditEntry): AuditEntryView {
  return {
    id: e.id,
    action: e.action,
    workspace_id: e.workspaceId,
    document_id: e.documentId,
    actor: { ...e.actor },
    timestamp: e.timestamp,
    version: e.version,
    before: e.before,
    after: e.after,
    change_reason: e.changeReason,
    trace_id: e.traceId,
  };
}

/** Audit entries oldest first (ids are time-ordered UUID v7), cursor-paged. */
export function createAuditService(deps: { accountStore: AccountStore }): AuditService {
  return {
    async list(ctx, query) {
      const afterId = query.cursor ? decodeCursor(query.cursor, isAfter).a : undefined;
      const { entries, total } = await deps.accountStore.listAudit({
        workspaceId: ctx.workspaceId,
        ...(query.documentId ? { documentId: query.documentId } : {}),
        ...(query.action ? { action: query.action } : {}),
        ...(query.since ? { since: query.since } : {}),
        ...(query.until ? { until: query.until } : {}),
        ...(afterId ? { afterId } : {}),
        limit: query.limit + 1,
      });
      const page = entries.slice(0, query.limit);
      const hasMore = entries.length > query.limit;
      const last = page.at(-1);
      return {
        entries: page.map(auditEntryView),
        pagination: { has_more: hasMore, next_cursor: hasMore && last ? encodeCursor({ a: last.id }) : null, total },
      };
    },
  };
}
