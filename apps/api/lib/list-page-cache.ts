import type { FastifyReply } from 'fastify';

/**
 * Serialised answers of `GET /documents`, per workspace and query string, each kept under the
 * list change mark it was read at (see `DocumentsService.listChangeMark`): a repeated list costs a
 * map lookup instead of a store query and serialisation, and any write that may change a list
 * (the mark moves) retires every entry at once. Bounded by the bytes it holds; when full, the
 * oldest entries go first.
 */
export interface ListPageCache {
  /** The body stored for this workspace and query under `mark`, or undefined. */
  get(workspaceId: string, query: string, mark: string): string | undefined;
  set(workspaceId: string, query: string, mark: string, body: string): void;
}

/** Default budget: a 20-document page is about 6 KB, so some thousands of pages. */
export const LIST_PAGE_CACHE_BYTES = 16 * 1024 * 1024;

export function createListPageCache(maxBytes = LIST_PAGE_CACHE_BYTES): ListPageCache {
  const entries = new Map<string, { mark: string; body: string }>();
  let bytes = 0;
  // Strings are UTF-16 in memory; length × 2 is close enough for a budget.
  const sizeOf = (key: string, body: string) => 2 * (key.length + body.length);
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    bytes -= sizeOf(key, entry.body);
  };
  return {
    get(workspaceId, query, mark) {
      const entry = entries.get(`${workspaceId}\n${query}`);
      return entry !== undefined && entry.mark === mark ? entry.body : undefined;
    },
    set(workspaceId, query, mark, body) {
      const key = `${workspaceId}\n${query}`;
      const size = sizeOf(key, body);
      if (size > maxBytes) return;
      remove(key);
      for (const oldest of entries.keys()) {
        if (bytes + size <= maxBytes) break;
        remove(oldest);
      }
      entries.set(key, { mark, body });
      bytes += size;
    },
  };
}

/** Sends an already serialised JSON body as it is (Fastify does not serialise a string again). */
export function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
