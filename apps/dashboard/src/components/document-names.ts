import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { DocumentName } from '../types.ts';

/** Ids asked in one request (the service takes at most 100). */
const BATCH = 100;

/**
 * Names for the document ids a page lists (e.g. audit entries), deleted documents included: the
 * ids not known yet are asked in one request (`/dashboard/api/document-names`), which answers a
 * deleted document with its last name and `deleted: true`, without a 404 per document. An id not
 * answered yet is absent.
 */
export function useDocumentNames(ids: readonly string[]): Map<string, DocumentName> {
  const [names, setNames] = useState<Map<string, DocumentName>>(new Map());
  const wanted = [...new Set(ids.filter(Boolean))].sort().join(',');
  useEffect(() => {
    const missing = wanted.split(',').filter((id) => id && !names.has(id));
    if (missing.length === 0) return;
    let live = true;
    const batches: string[][] = [];
    for (let i = 0; i < missing.length; i += BATCH) batches.push(missing.slice(i, i + BATCH));
    void Promise.all(
      batches.map((batch) =>
        api<{ documents: DocumentName[] }>(
          'GET',
          `/dashboard/api/document-names?ids=${encodeURIComponent(batch.join(','))}`,
        ).then(
          (r) => r.documents,
          () => [],
        ),
      ),
    ).then((found) => {
      if (!live) return;
      setNames((prev) => {
        const next = new Map(prev);
        for (const d of found.flat()) next.set(d.document_id, d);
        return next;
      });
    });
    return () => {
      live = false;
    };
  }, [wanted]);
  return names;
}
