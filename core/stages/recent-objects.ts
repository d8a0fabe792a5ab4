/**
 * The claim-check objects this process's stages wrote a moment ago (parsed text, chunk batches),
 * kept in memory so that the next stage, when it runs in the same process, reads them from there
 * instead of from the object store: the object store stays the record (every object is written
 * there first, and a stage in another process reads it there), this only saves the read back.
 *
 * Bounded by bytes (the oldest go first) and by age; an object larger than an eighth of the bound
 * is not kept. A key written again replaces its copy. Objects under one key are derived from the
 * same upload of one document version, so a copy is what the store holds unless another process
 * rewrote the key meanwhile with other settings — which the age bound limits.
 */
export interface RecentObjects {
  remember(key: string, bytes: Buffer): void;
  /** The copy of `key`, or undefined when it is not kept (or too old). */
  recall(key: string): Buffer | undefined;
}

export function createRecentObjects(options: { readonly maxBytes: number; readonly maxAgeMs: number }): RecentObjects {
  const kept = new Map<string, { bytes: Buffer; at: number }>();
  let total = 0;
  const drop = (key: string) => {
    const entry = kept.get(key);
    if (entry === undefined) return;
    kept.delete(key);
    total -= entry.bytes.length;
  };
  return {
    remember(key, bytes) {
      drop(key);
      if (bytes.length > options.maxBytes / 8) return;
      kept.set(key, { bytes, at: Date.now() });
      total += bytes.length;
      for (const oldest of kept.keys()) {
        if (total <= options.maxBytes) break;
        drop(oldest);
      }
    },
    recall(key) {
      const entry = kept.get(key);
      if (entry === undefined) return undefined;
      if (Date.now() - entry.at > options.maxAgeMs) {
        drop(key);
        return undefined;
      }
      return entry.bytes;
    },
  };
}
