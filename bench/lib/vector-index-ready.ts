import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';

/**
 * Waits until the embedded store's vector index answers vector queries: a large one is built in a
 * worker thread after the first vector query (which, like those until the build ends, scans
 * exactly). Returns at once for a store without one building.
 */
export async function vectorIndexReady(store: DocumentStore): Promise<void> {
  for (;;) {
    const degraded = (await store.ping())?.degraded ?? '';
    if (!degraded.includes('vector index')) return;
    if (degraded.includes('failed')) throw new Error(degraded);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
