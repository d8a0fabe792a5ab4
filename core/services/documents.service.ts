import { KbError } from '../errors/kb-error.ts';
import type { DocumentRecord, VersionStatus } from '../model/document-records.model.ts';
import type {
  DocumentListItemView,
  DocumentNameView,
  DocumentView,
  PaginationView,
} from '../model/response-views.model.ts';
import {
  type DocumentListQuery,
  type DocumentStore,
  SOURCE_ITEM_LOOKUP_MAX,
  type SourceItemKey,
} from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { decodeCursor, encodeCursor } from '../util/cursor.ts';
import { canSee, isDocumentId, loadDocument } from './document-access.ts';
import { documentView, listItemView } from './document-views.ts';
import { createListTotalCache } from './list-total-cache.ts';
import type { RequestContext } from './request-context.ts';

export interface ListDocumentsQuery {
  readonly status?: VersionStatus;
  readonly source?: string;
  readonly createdAfter?: string;
  readonly createdBefore?: string;
  /** Cursor mode (default). */
  readonly cursor?: string;
  readonly limit?: number;
  /** Offset mode, chosen when `page` or `pageSize` is present. */
  readonly page?: number;
  readonly pageSize?: number;
}

export type ListDocumentsResult =
  | { readonly mode: 'cursor'; readonly documents: DocumentListItemView[]; readonly pagination: PaginationView }
  | {
      readonly mode: 'offset';
      readonly documents: DocumentListItemView[];
      readonly total: number;
      readonly page: number;
      readonly page_size: number;
    };

/** A document found by the (source, item) it was created for, as `POST /documents/lookup` answers it. */
export interface SourceItemMatchView {
  readonly source: string;
  readonly source_item: string;
  readonly document_id: string;
  readonly name: string;
  readonly version: number;
  readonly status: VersionStatus;
  readonly content_hash: string;
  readonly size_bytes: number;
  readonly updated_at: string;
}

export interface DocumentsService {
  get(ctx: RequestContext, documentId: string): Promise<DocumentView>;
  /**
   * The workspace's documents created for these (source, item) pairs (at most
   * {@link SOURCE_ITEM_LOOKUP_MAX}), each with its latest version: what a bulk loader needs to tell
   * unchanged, changed and new files apart in one request. Pairs that match nothing are absent.
   */
  lookup(ctx: RequestContext, items: readonly SourceItemKey[]): Promise<SourceItemMatchView[]>;
  list(ctx: RequestContext, query: ListDocumentsQuery): Promise<ListDocumentsResult>;
  /**
   * A token that changes whenever a write may have changed what `list` answers for any workspace
   * (the document store's change mark): an answer of `list` read after the token stays right
   * while the token is the same, so a caller may cache it (and its serialised form) under it.
   */
  listChangeMark(): string;
  /**
   * The names of the given documents of the workspace, deleted ones too (for pages that list
   * document ids, such as the audit log): a live document's current name; a deleted one's latest
   * version's name with `deleted: true`; a purged or unknown one `name: null, deleted: true`.
   * One entry per distinct id, in the order given.
   */
  names(ctx: RequestContext, documentIds: readonly string[]): Promise<DocumentNameView[]>;
}

/** A list cursor: the creation time and id of the last document of the page before. */
type ListCursor = { createdAt: string; id: string };
const isListCursor = (v: unknown): v is ListCursor =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as ListCursor).createdAt === 'string' &&
  typeof (v as ListCursor).id === 'string';

/**
 * Document reads: one document as its latest version shows it, and the workspace's documents
 * newest first, by cursor or by page. Promises that the total of a list is counted again only
 * after a write moved the store's change mark.
 */
export function createDocumentsService(deps: {
  documents: DocumentStore;
  objects: ObjectStore;
  /** The item key within its source of each synchronised document (`source_item`); none when absent. */
  sourceItems?: (documentIds: readonly string[]) => Promise<Map<string, string>>;
}): DocumentsService {
  const { documents, objects } = deps;
  /**
   * The documents' views with their `source_item`: the item a source synchronises it from, else
   * the item it was created for, else null.
   */
  async function withSourceItems<V extends { document_id: string }>(
    views: V[],
    records: readonly DocumentRecord[],
  ): Promise<Array<V & { source_item: string | null }>> {
    const items =
      deps.sourceItems && views.length > 0 ? await deps.sourceItems(views.map((v) => v.document_id)) : new Map();
    const recorded = new Map(records.map((r) => [r.id, r.sourceItem]));
    return views.map((v) => ({ ...v, source_item: items.get(v.document_id) ?? recorded.get(v.document_id) ?? null }));
  }
  const totals = createListTotalCache();

  /** The store's list under `filters`, counting the total only when the change mark moved since. */
  async function listPage(
    filters: Omit<DocumentListQuery, 'limit' | 'after' | 'offset' | 'knownTotal'>,
    page: Pick<DocumentListQuery, 'limit' | 'after' | 'offset'>,
  ): Promise<{ documents: DocumentRecord[]; total: number }> {
    // Read before the list: a write landing meanwhile moves the mark, so nothing older is kept under it.
    const mark = documents.changeMark();
    const knownTotal = totals.get(filters, mark);
    const result = await documents.listDocuments({
      ...filters,
      ...page,
      ...(knownTotal !== undefined ? { knownTotal } : {}),
    });
    if (knownTotal === undefined) totals.set(filters, mark, result.total);
    return result;
  }

  /**
   * The documents of the workspace a scoped caller sees (its latest version passes the scope's
   * rules), newest first, under the store's filters: the store cannot apply the rules, so the
   * whole filtered list is read (in pages) and checked here.
   */
  async function visibleDocuments(
    ctx: RequestContext,
    filters: Omit<DocumentListQuery, 'limit' | 'after' | 'offset' | 'knownTotal'>,
  ): Promise<DocumentRecord[]> {
    const visible: DocumentRecord[] = [];
    let after: DocumentListQuery['after'];
    // The first page counts the list; the next ones reuse its count (the store would count again).
    let knownTotal: number | undefined;
    for (;;) {
      const page = await documents.listDocuments({
        ...filters,
        limit: 1000,
        ...(after ? { after } : {}),
        ...(knownTotal !== undefined ? { knownTotal } : {}),
      });
      knownTotal = page.total;
      for (const doc of page.documents) if (canSee(ctx, doc, doc.latest)) visible.push(doc);
      const last = page.documents.at(-1);
      if (page.documents.length < 1000 || !last) return visible;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }

  /** {@link listPage} for a scoped caller: the same page and total, of what it sees. */
  async function scopedListPage(
    ctx: RequestContext,
    filters: Omit<DocumentListQuery, 'limit' | 'after' | 'offset' | 'knownTotal'>,
    page: Pick<DocumentListQuery, 'limit' | 'after' | 'offset'>,
  ): Promise<{ documents: DocumentRecord[]; total: number }> {
    const all = await visibleDocuments(ctx, filters);
    let from = page.offset ?? 0;
    if (page.after) {
      const { createdAt, id } = page.after;
      const at = all.findIndex((d) => d.createdAt < createdAt || (d.createdAt === createdAt && d.id < id));
      from = at === -1 ? all.length : at;
    }
    return { documents: all.slice(from, from + page.limit), total: all.length };
  }

  return {
    async get(ctx, documentId) {
      const record = await loadDocument(documents, ctx, documentId);
      const [view] = await withSourceItems([documentView(record, objects)], [record]);
      return view as DocumentView;
    },

    async lookup(ctx, items) {
      if (items.length > SOURCE_ITEM_LOOKUP_MAX) {
        throw new KbError('bad-request', `At most ${SOURCE_ITEM_LOOKUP_MAX} items may be looked up at once.`);
      }
      const found = await documents.lookupSourceItems(ctx.workspaceId, items);
      return found.flatMap((doc) =>
        doc.sourceItem === undefined
          ? []
          : [
              {
                source: doc.source,
                source_item: doc.sourceItem,
                document_id: doc.id,
                name: doc.latest.name,
                version: doc.latestVersion,
                status: doc.latest.status,
                content_hash: doc.latest.contentHash,
                size_bytes: doc.latest.sizeBytes,
                updated_at: doc.updatedAt,
              },
            ],
      );
    },

    listChangeMark() {
      return documents.changeMark();
    },

    async names(ctx, documentIds) {
      return Promise.all(
        [...new Set(documentIds)].map(async (id): Promise<DocumentNameView> => {
          const live = isDocumentId(id) ? await documents.getDocument(ctx.workspaceId, id) : null;
          if (live) return { document_id: id, name: live.latest.name, deleted: false };
          // Deleted: its versions stay (point-in-time search); purged or unknown: nothing does.
          const [latest] = isDocumentId(id) ? await documents.listVersions(ctx.workspaceId, id) : [];
          return { document_id: id, name: latest?.name ?? null, deleted: true };
        }),
      );
    },

    async list(ctx, query) {
      if (query.cursor !== undefined && (query.page !== undefined || query.pageSize !== undefined)) {
        throw new KbError(
          'bad-request',
          'Use either `cursor` (cursor paging) or `page`/`page_size` (offset paging), not both.',
        );
      }
      const filters = {
        workspaceId: ctx.workspaceId,
        ...(query.status ? { status: query.status } : {}),
        ...(query.source ? { source: query.source } : {}),
        ...(query.createdAfter ? { createdAfter: query.createdAfter } : {}),
        ...(query.createdBefore ? { createdBefore: query.createdBefore } : {}),
      };
      if (query.page !== undefined || query.pageSize !== undefined) {
        const page = query.page ?? 1;
        const pageSize = query.pageSize ?? 20;
        const paging = { limit: pageSize, offset: (page - 1) * pageSize };
        const result = ctx.scope ? await scopedListPage(ctx, filters, paging) : await listPage(filters, paging);
        return {
          mode: 'offset',
          documents: await withSourceItems(result.documents.map(listItemView), result.documents),
          total: result.total,
          page,
          page_size: pageSize,
        };
      }
      const limit = query.limit ?? 20;
      const after = query.cursor ? decodeCursor(query.cursor, isListCursor) : undefined;
      const paging = { limit: limit + 1, ...(after ? { after } : {}) };
      const result = ctx.scope ? await scopedListPage(ctx, filters, paging) : await listPage(filters, paging);
      const page = result.documents.slice(0, limit);
      const last = page.at(-1);
      const hasMore = result.documents.length > limit;
      return {
        mode: 'cursor',
        documents: await withSourceItems(page.map(listItemView), page),
        pagination: {
          has_more: hasMore,
          next_cursor:
            hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.id } satisfies ListCursor) : null,
          total: result.total,
        },
      };
    },
  };
}
