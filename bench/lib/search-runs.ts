/**
 * Timed searches through a `kb serve` child's HTTP API, the keys taken in turn: what the search
 * rows measure as "the service".
 */
import type { ChildService } from '../../support/child-service.ts';
import { createJsonClient } from './service.ts';
import { timedPool } from './stats.ts';
import { firstLine } from './target.ts';

/**
 * A runner of `POST /api/v1/search` over `texts` with `clients` in flight, each request's body made
 * by `body`; a failed request names the child's state and the end of its output.
 */
export function createSearchRuns(server: ChildService, keys: readonly string[]) {
  let client = 0;
  return async (texts: readonly string[], clients: number, body: (text: string) => object) => {
    const http = createJsonClient(clients);
    try {
      return await timedPool(texts, clients, async (text) => {
        const key = keys[client++ % keys.length] as string;
        const response = await http
          .post(`${server.url}/api/v1/search`, body(text), { 'x-api-key': key })
          .catch((error: unknown) => {
            const state = server.process.exitCode ?? server.process.signalCode;
            throw new Error(
              `POST /api/v1/search failed (${firstLine(error)}); kb serve ${state === null ? 'is running' : `exited (${state})`}; its output ends: ${server.output().slice(-800)}`,
            );
          });
        if (response.status !== 200) {
          throw new Error(`search answered ${response.status}: ${response.body.slice(0, 300)}`);
        }
      });
    } finally {
      http.close();
    }
  };
}
