import type { NotificationOutbox, PendingNotification } from '../document-store.port.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import type { DocumentSource } from './opensearch-records.ts';

/** Clears the pending notification only when it is still the one named (a no-op otherwise). */
const CLEAR_SCRIPT = `
  if (ctx._source.notification != null && ctx._source.notification.id == params.id) {
    ctx._source.notification = null;
  } else {
    ctx.op = 'noop';
  }`;

/**
 * The {@link NotificationOutbox} role of the OpenSearch document store: the pending notification
 * is a field of its document record, written by the same guarded write as the deletion
 * (`opensearch-versions.ts`), searched by its `id` and `at`, and cleared by a conditional script.
 */
export function createOpenSearchNotificationOutbox(context: OpenSearchContext): NotificationOutbox {
  const { names, search, searchLimit, refreshIndexes, update } = context;
  return {
    async listPendingNotifications(limit) {
      const size = searchLimit(limit);
      if (size === 0) return [];
      // The deletion is written without waiting for a refresh: this occasional search refreshes
      // first, so it sees every notification recorded before it.
      await refreshIndexes([names.documents]);
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
    },

    async clearNotification(documentId, id) {
      // Listed after a refresh, so the clearing needs none of its own.
      await update(
        names.documents,
        documentId,
        { script: { lang: 'painless', source: CLEAR_SCRIPT, params: { id } } },
        'later',
      );
    },
  };
}
