import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import type { DocumentDetail } from '../types.ts';

/**
 * Names for the document ids a page lists (e.g. audit entries): each id is read once; a document
 * that no longer exists (deleted or purged) maps to null, one not read yet is absent.
 */
export function useDocumentNames(ids: readonly string[]): Map<string, string | null> {
  const [names, setNames] = useState<Map<string, string | null>>(new Map());
  const wanted = [...new Set(ids.filter(Boolean))].sort().join(',');
  useEffect(() => {
    const missing = wanted.split(',').filter((id) => id && !names.has(id));
    if (missing.length === 0) return;
    let live = true;
    void Promise.all(
      missing.map((id) =>
        api<DocumentDetail>('GET', `/api/v1/documents/${id}`).then(
          (d): [string, string | null] => [id, d.name],
          (e): [string, string | null] | null => (e instanceof ApiError && e.status === 404 ? [id, null] : null),
        ),
      ),
    ).then((found) => {
      if (!live) return;
      setNames((prev) => {
        const next = new Map(prev);
        for (const pair of found) if (pair) next.set(pair[0], pair[1]);
        return next;
      });
    });
    return () => {
      live = false;
    };
  }, [wanted]);
  return names;
}
