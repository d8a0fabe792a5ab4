import type { EngineHttp } from './opensearch-http.ts';
import type { IndexNames } from './opensearch-mappings.ts';

interface IndexStats {
  readonly _all?: {
    readonly primaries?: {
      readonly indexing?: { readonly index_total?: number; readonly delete_total?: number };
      readonly refresh?: { readonly total?: number; readonly external_total?: number };
    };
  };
}

/**
 * The change mark of the OpenSearch document store: this instance's writes, and the indexing and
 * refresh counters of the list's indexes (documents and versions), polled every `pollMs` once the
 * mark has been asked for.
 */
export function createChangeMark(
  http: EngineHttp,
  names: IndexNames,
  pollMs: number,
): { changeMark(): string; stop(): void } {
  let stopped = false;
  let remoteMark = 'start';
  let pollFailures = 0;
  let poller: ReturnType<typeof setInterval> | null = null;
  let polling = false;
  const statsPath = `/${names.documents},${names.versions}/_stats/indexing,refresh`;
  async function pollChanges(): Promise<void> {
    if (polling || stopped) return;
    polling = true;
    try {
      const stats = (await http.request<IndexStats>('GET', statsPath)).body._all?.primaries;
      // A write counts once indexed, and again once a refresh made it visible to the list.
      remoteMark = [
        stats?.indexing?.index_total ?? 0,
        stats?.indexing?.delete_total ?? 0,
        stats?.refresh?.total ?? 0,
        stats?.refresh?.external_total ?? 0,
      ].join('-');
    } catch {
      // Unknown state: a new mark each time, so nothing read before is trusted.
      pollFailures += 1;
      remoteMark = `unreachable-${pollFailures}`;
    } finally {
      polling = false;
    }
  }
  function changeMark(): string {
    if (poller === null && !stopped) {
      poller = setInterval(() => void pollChanges(), pollMs);
      poller.unref();
      void pollChanges();
    }
    return `${http.writes}.${remoteMark}`;
  }

  return {
    changeMark,
    /** Stops polling for good (the store is closing). */
    stop() {
      stopped = true;
      if (poller !== null) clearInterval(poller);
    },
  };
}
