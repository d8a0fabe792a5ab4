import { KbError } from '../errors/kb-error.ts';
import type { AuditEntry } from '../model/account-records.model.ts';
import type { AuditEntryView } from '../model/response-views.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import { decodeCursor, encodeCursor } from '../util/cursor.ts';
import type { AuditService } from './services.ts';

/** A page's cursor: the id of its last entry, as `a` (oldest first) or `b` (newest first). */
type AuditCursor = { a: string } | { b: string };
const isCursor = (v: unknown): v is AuditCursor =>
  typeof v === 'object' &&
  v !== null &&
  (typeof (v as { a?: unknown }).a === 'string' || typeof (v as { b?: unknown }).b === 'string');

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

/** Audit entries oldest first (ids are time-ordered UUID v7) or newest first, cursor-paged. */
export function createAuditService(deps: { accountStore: AccountStore }): AuditService {
  return {
    async list(ctx, query) {
      const order = query.order ?? 'asc';
      const cursor = query.cursor ? decodeCursor(query.cursor, isCursor) : undefined;
      if (cursor && ('a' in cursor ? order !== 'asc' : order !== 'desc')) {
        throw new KbError('bad-request', '`cursor` belongs to a listing in the other `order`; pass the same `order`.');
      }
      const afterId = cursor && 'a' in cursor ? cursor.a : undefined;
      const beforeId = cursor && 'b' in cursor ? cursor.b : undefined;
      const { entries, total } = await deps.accountStore.listAudit({
        workspaceId: ctx.workspaceId,
        ...(query.documentId ? { documentId: query.documentId } : {}),
        ...(query.action ? { action: query.action } : {}),
        ...(query.since ? { since: query.since } : {}),
        ...(query.until ? { until: query.until } : {}),
        ...(afterId ? { afterId } : {}),
        ...(beforeId ? { beforeId } : {}),
        order,
        limit: query.limit + 1,
      });
      const page = entries.slice(0, query.limit);
      const hasMore = entries.length > query.limit;
      const last = page.at(-1);
      return {
        entries: page.map(auditEntryView),
        pagination: {
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor(order === 'asc' ? { a: last.id } : { b: last.id }) : null,
          total,
        },
      };
    },
  };
}
