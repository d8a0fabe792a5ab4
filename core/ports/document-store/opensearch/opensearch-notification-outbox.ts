import type { NotificationOutbox, PendingNotification } from '../document-store.port.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import type { DocumentSource, OutboxSource } from './opensearch-records.ts';

/** Clears the pending notification only when it is still the one named (a no-op otherwise). */
const CLEAR_SCRIPT = `
  if (ctx._source.notification != null && ctx._source.notification.id == params.id) {
    ctx._source.notification = null;
  } else {
    ctx.op = 'noop';
  }`;

const byTime = (a: PendingNotification, b: PendingNotification): number =>
  a.recordedAt < b.recordedAt
    ? -1
    : a.recordedAt > b.recordedAt
      ? 1
      : a.documentId < b.documentId
        ? -1
        : a.documentId > b.documentId
          ? 1
          : a.id < b.id
            ? -1
            : a.id > b.id
              ? 1
              : 0;

/**
 * The {@link NotificationOutbox} role of the OpenSearch document store: a deletion's pending
 * notification is a field of its document record, written by the same guarded write as the
 * deletion (`opensearch-versions.ts`) and cleared by a conditional script; a purge keeps its own
 * and the one its document held in the outbox index, answered once the document is gone.
 */
export function createOpenSearchNotificationOutbox(context: OpenSearchContext): NotificationOutbox {
  const { names, search, searchLimit, refreshIndexes, update, mget, getGuarded, http, path } = context;

  async function held(size: number): Promise<PendingNotification[]> {
    const body = await search<DocumentSource>(
      names.documents,
      {
        size,
        query: { bool: { filter: [{ exists: { field: 'notification.id' } }] } },
        sort: [{ 'notification.at': 'asc' }, { id: 'asc' }],
        _source: ['id', 'workspace_id', 'notification'],
      },
      true,
    );
    return body.hits.hits.flatMap((hit): PendingNotification[] => {
      const notification = hit._source?.notification;
      if (hit._source === undefined || notification === undefined || notification === null) return [];
      return [
        {
          id: notification.id,
          workspaceId: hit._source.workspace_id,
          documentId: hit._source.id,
          recordedAt: notification.at,
          body: notification.body,
        },
      ];
    });
  }

  async function kept(size: number): Promise<PendingNotification[]> {
    const body = await search<OutboxSource>(
      names.outbox,
      { size, query: { match_all: {} }, sort: [{ at: 'asc' }, { document_id: 'asc' }, { id: 'asc' }] },
      true,
    );
    const entries = body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [hit._source]));
    // A purge records these before it removes the document: answered once the document is gone.
    const present = await mget<DocumentSource>(
      names.documents,
      entries.map((entry) => entry.document_id),
    );
    return entries
      .filter((entry) => !present.has(entry.document_id))
      .map((entry) => ({
        id: entry.id,
        workspaceId: entry.workspace_id,
        documentId: entry.document_id,
        recordedAt: entry.at,
        body: entry.body,
      }));
  }

  return {
    async listPendingNotifications(limit) {
      const size = searchLimit(limit);
      if (size === 0) return [];
      // Both are written without waiting for a refresh: this occasional search refreshes first,
      // so it sees every notification recorded before it.
      await refreshIndexes([names.documents, names.outbox]);
      const [fromDocuments, fromOutbox] = await Promise.all([held(size), kept(size)]);
      return [...fromDocuments, ...fromOutbox].sort(byTime).slice(0, size);
    },

    async clearNotification(documentId, id) {
      // Listed after a refresh, so the clearing needs none of its own.
      await update(
        names.documents,
        documentId,
        { script: { lang: 'painless', source: CLEAR_SCRIPT, params: { id } } },
        'later',
      );
      for (const entryId of [`${documentId}:held`, `${documentId}:purge`]) {
        const entry = await getGuarded<OutboxSource>(names.outbox, entryId);
        if (entry === null || entry.source.id !== id) continue;
        await http.request('DELETE', path(names.outbox, '_doc', entryId), undefined, {
          query: { if_seq_no: entry.seqNo, if_primary_term: entry.primaryTerm },
          allow: [404, 409],
        });
      }
    },
  };
}
