import type { SourceItemKey, VersionStore } from '../document-store.port.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { DOCUMENT_COLUMNS, type DocumentRow, toDocumentRecord } from './sqlite-rows.ts';

/**
 * `lookupSourceItems` of the SQLite document store: one query over the partial index on
 * (workspace, source, item), the pairs given as a JSON array.
 */
export function createSqliteSourceItemLookup(context: SqliteContext): Pick<VersionStore, 'lookupSourceItems'> {
  const { db, run } = context;
  const lookup = db.prepare<[string, string], DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM documents d
     JOIN versions v ON v.document_id = d.id AND v.version = d.latest_version
     WHERE d.workspace_id = ? AND d.deleted_at IS NULL AND d.source_item IS NOT NULL
       AND (d.source, d.source_item) IN (
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
       )
     ORDER BY d.source, d.source_item, d.created_at, d.id`,
  );
  return {
    async lookupSourceItems(workspaceId: string, items: readonly SourceItemKey[]) {
      if (items.length === 0) return [];
      const pairs = JSON.stringify(items.map((item) => [item.source, item.sourceItem]));
      return run(() => lookup.all(workspaceId, pairs).map(toDocumentRecord));
    },
  };
}
