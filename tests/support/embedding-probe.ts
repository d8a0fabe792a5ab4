/**
 * A decorator around a real embedding provider for tests: it counts the document texts that reach
 * the provider and can hold document embedding until released (to keep a version in `processing`
 * deterministically). Queries pass straight through, never held and never counted.
 */
import { configFrom } from '../../core/config/config.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { createEmbeddingProvider } from '../../core/runtime/create-embedding-provider.ts';
import { sameIdentityAs } from '../../support/embedding-identity.ts';

export interface EmbeddingProbe extends EmbeddingProvider {
  /** Document texts passed to `embedDocuments` since the start or the last `reset`. */
  readonly texts: readonly string[];
  /** Forgets the texts seen so far. */
  reset(): void;
  /** From now on, `embedDocuments` waits until `release` (calls already inside the provider finish). */
  hold(): void;
  /** Lets every held call through and stops holding. */
  release(): void;
  /** Resolves once a call is waiting on the hold. */
  waitUntilHeld(timeoutMs?: number): Promise<void>;
  /** Closes the wrapped provider. */
  close(): Promise<void>;
}

export function probeEmbeddings(inner: EmbeddingProvider): EmbeddingProbe {
  let texts: string[] = [];
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  let waiting = 0;
  const waiters: Array<() => void> = [];

  const notifyHeld = () => {
    for (const wake of waiters.splice(0)) wake();
  };

  return {
    ...sameIdentityAs(inner),
    get texts() {
      return texts;
    },
    reset() {
      texts = [];
    },
    hold() {
      if (gate) return;
      let open = () => {};
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { promise, open };
    },
    release() {
      const current = gate;
      gate = null;
      current?.open();
    },
    waitUntilHeld(timeoutMs = 60_000) {
      if (waiting > 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no embedding call reached the hold')), timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async embedDocuments(batch) {
      while (gate) {
        const current = gate;
        waiting += 1;
        notifyHeld();
        try {
          await current.promise;
        } finally {
          waiting -= 1;
        }
      }
      texts.push(...batch);
      return inner.embedDocuments(batch);
    },
    embedQuery(text) {
      return inner.embedQuery(text);
    },
    close() {
      return inner.close();
    },
  };
}

/**
 * The small bundled `local` provider, wrapped in a probe: the tests that use it count and hold the
 * texts that reach a provider, which does not depend on the model, and it embeds long documents fast.
 */
export async function createEmbeddingProbe(): Promise<EmbeddingProbe> {
  return probeEmbeddings(await createEmbeddingProvider(configFrom({ KB_EMBEDDING_PROVIDER: 'local' }).embedding));
}
