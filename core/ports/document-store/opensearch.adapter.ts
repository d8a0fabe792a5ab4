import { engineUnavailable } from '../../errors/kb-error.ts';
import type { DocumentStore } from './document-store.port.ts';
import { createChangeMark } from './opensearch/opensearch-change-mark.ts';
import { createOpenSearchChunkIndex } from './opensearch/opensearch-chunks.ts';
import { type OpenSearchDocumentStoreOptions, openOpenSearchContext } from './opensearch/opensearch-context.ts';
import { OPENSEARCH } from './opensearch/opensearch-http.ts';
import { createOpenSearchIndexModelStore } from './opensearch/opensearch-index-model.ts';
import { createOpenSearchNotificationOutbox } from './opensearch/opensearch-notification-outbox.ts';
import { createOpenSearchPendingVersions } from './opensearch/opensearch-pending-versions.ts';
import { createOpenSearchRetentionStore } from './opensearch/opensearch-retention.ts';
import { createOpenSearchSourceItemLookup } from './opensearch/opensearch-source-items.ts';
import { createOpenSearchTransfer } from './opensearch/opensearch-transfer.ts';
import { createOpenSearchVectorCache } from './opensearch/opensearch-vector-cache.ts';
import { createOpenSearchVersionStore } from './opensearch/opensearch-versions.ts';

export type { OpenSearchDocumentStoreOptions };

/**
 * The distributed runtime's {@link DocumentStore} on OpenSearch with the k-NN plugin.
 *
 * Layout: six indexes named after `indexPrefix` (created at start-up when missing, strict
 * mappings): `-outbox` (pending notifications of purged documents),
 * `-documents` (one per document; the authority for version allocation and serving),
 * `-versions` (id `<document>:<version>`), `-chunks` (id `<document>:<version>:<index>`, BM25 on
 * `content`, vectors in a Lucene HNSW cosine field `vector_d<dimensions>`), `-vector-cache` (id
 * derived from model and content hash, vector as base64 float32) and `-meta` (the index model).
 *
 * Adapter decisions beyond the port's contract:
 * - Timestamps are stored in canonical form (`Date#toISOString`) in `date` fields: a record
 *   returns `2024-01-01T00:00:00.000Z` for an input of `2024-01-01T00:00:00Z`, and ranges compare
 *   instants. Unparseable timestamps reject with `bad-request`.
 * - A write whose result a search or list must show is made visible by one of two means: a
 *   deletion by a refresh shared by concurrent callers (`refresh` option, default `true`) before
 *   its promise resolves; a new document or version, and the status a pipeline stage sets, by this
 *   instance's next list refreshing the documents index first (one refresh for every such write
 *   since its last list, none while nobody lists), while another instance's list shows it after
 *   the index's next periodic refresh (every `documentsRefreshMs`), which the writer does not wait
 *   for. Lookups by id are real-time and need none; version records are read by id only
 *   (`listVersions` reads versions 1 … latest by id), so they are written without one. Chunks are
 *   bulk-written without a refresh (this instance refreshes before its own next search of them); a
 *   completion copies the served interval onto chunks `0 … chunkCount-1` by id (no search, so no
 *   refresh first), then refreshes the chunks once before it marks the version `completed`, so
 *   whoever sees that status also finds the chunks in search; retention's search of versions by
 *   served interval refreshes the versions index first.
 * - `changeMark` joins this instance's answered writes with the documents and versions indexes'
 *   indexing and refresh counters, polled every `changePollMs` once the mark has been asked for.
 * - Without transactions, each change is ordered so that the document record decides and the rest
 *   follows: `appendVersion` creates version `n+1` (`op_type=create`, the allocation) and then
 *   advances the document with a sequence-number guard; an append that finds `n+1` taken advances
 *   the document for it and retries, so numbers stay gap-free and a crashed append is adopted.
 *   `completeVersion` and `softDelete` change the document's serving history under the same guard,
 *   then copy the served intervals to the version and chunk records; the copies carry the
 *   document's revision and an older copy never overwrites a newer one. A version is marked
 *   `completed` last, so a retried completion repairs an interrupted one.
 * - Search filters need no join: each chunk carries its version's served interval, name, mime
 *   type and metadata (as `["key", value]` tokens for exact, type-exact filters) and its
 *   document's creation time. `putChunks` re-reads the document after writing and re-copies if
 *   serving changed meanwhile.
 * - Switching the index model to another dimension count adds a vector field for it; `replace`
 *   removes every stored vector from the chunks. Search and `hasVectors` only count vectors tagged
 *   with the current model.
 * - Updates of many chunks go through `_bulk` with the ids found by a search, so only core
 *   features are needed (no `_update_by_query`, no `_delete_by_query`).
 * - A zero query vector finds nothing (cosine is undefined); a zero chunk vector is refused with
 *   `bad-request` (the engine cannot index it).
 * - `completeVersion` of a missing version resolves `{served: false}`; `hasVectors` of a version
 *   without chunks is false; `archiveVersion` refuses (`conflict`) the version served now.
 * - A write's key (`NewVersion.writeKey`, `softDelete`'s) is a field of the version record the
 *   append creates, or of the document record the deletion writes: the same write as the change.
 *   `findWrite` searches both indexes for it after refreshing them (it is asked only by a request
 *   that resumes one cut off), skips a version 1 without its document, and advances the document
 *   for a version an append left behind.
 * - A deletion's pending notification (`NotificationOutbox`) is a field of the document record
 *   that the deletion's guarded write writes; `clearNotification` is a script that clears the
 *   field only while it still holds that id. A purge first writes the notification the document
 *   held and its own to the `-outbox` index (ids `<document>:held` and `<document>:purge`, created
 *   only if absent, so a purge retried after one cut off keeps the first one's), then removes the
 *   document. `listPendingNotifications` refreshes both indexes, searches both, and leaves out an
 *   outbox entry whose document still exists (its purge not finished); such entries are fetched
 *   but not answered, so a page may hold fewer than `limit` while more are pending.
 * - Keyword search ORs the words of the text (Unicode words, lower-cased, diacritics folded,
 *   Porter-stemmed); the score is BM25.
 *
 * One HTTP client, the index names and the low-level reads and writes
 * (`opensearch/opensearch-context.ts`) serve every role; each role is built in its own file
 * under `opensearch/`.
 */
export async function createOpenSearchDocumentStore(options: OpenSearchDocumentStoreOptions): Promise<DocumentStore> {
  const context = await openOpenSearchContext(options);
  const changes = createChangeMark(context.http, context.names, options.changePollMs ?? 500);
  let closed = false;

  return {
    kind: 'opensearch',
    ...createOpenSearchVersionStore(context, changes.changeMark),
    ...createOpenSearchSourceItemLookup(context),
    ...createOpenSearchChunkIndex(context),
    ...createOpenSearchIndexModelStore(context),
    ...createOpenSearchVectorCache(context),
    ...createOpenSearchRetentionStore(context),
    ...createOpenSearchPendingVersions(context),
    ...createOpenSearchNotificationOutbox(context),
    ...createOpenSearchTransfer(context),

    async ping() {
      // Not only the node: the store's own indexes must be usable. A red index (a primary shard
      // unassigned or still recovering after a restart) answers lookups with errors.
      const indexes = Object.values(context.names).join(',');
      const { body } = await context.http.request<{ status?: string; unassigned_shards?: number }>(
        'GET',
        `/_cluster/health/${indexes}`,
        undefined,
        // A missing index would otherwise be waited for (30 s by default).
        { query: { timeout: '1s' } },
      );
      if (body.status === 'red') {
        throw engineUnavailable(
          OPENSEARCH,
          `OpenSearch indexes ${indexes} are red (${body.unassigned_shards ?? 'some'} shards unassigned or recovering)`,
        );
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      changes.stop();
      await context.http.close();
    },
  };
}
