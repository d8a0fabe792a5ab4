import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import type { SourceStore } from '../ports/source-store/source-store.port.ts';
import type { WebhookStore } from '../ports/webhook-store/webhook-store.port.ts';

/** The stores a backup reads and a restore writes: the same ports in both runtimes. */
export interface BackupStores {
  readonly documents: DocumentStore;
  readonly objects: ObjectStore;
  readonly accountStore: AccountStore;
  readonly sources: SourceStore;
  readonly webhooks: WebhookStore;
}

/** How far a backup, verification or restore is: `done` of `total` steps of the named phase. */
export interface BackupProgress {
  readonly phase: string;
  readonly done: number;
  readonly total: number;
}

export type ProgressListener = (progress: BackupProgress) => void;

/** Calls `listener` for a phase of `total` steps: `step()` after each. */
export function phaseProgress(listener: ProgressListener | undefined, phase: string, total: number) {
  let done = 0;
  listener?.({ phase, done, total });
  return {
    step(count = 1) {
      done += count;
      listener?.({ phase, done, total });
    },
  };
}

/** Runs `work` over `items` with at most `limit` at once, in order of start. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
