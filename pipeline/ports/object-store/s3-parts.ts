/**
 * How the S3 adapter reads a streamed body into upload parts without holding more than a bounded
 * number of bytes across all the uploads of the process.
 */

/** Bytes of part buffers the uploads of a process may hold at once; waiters queue in order. */
export interface ByteBudget {
  acquire(bytes: number): Promise<void>;
  release(bytes: number): void;
}

export function createByteBudget(limit: number): ByteBudget {
  let free = limit;
  const waiting: { bytes: number; resume: () => void }[] = [];
  const wake = () => {
    while (waiting.length > 0 && (waiting[0] as { bytes: number }).bytes <= free) {
      const next = waiting.shift() as { bytes: number; resume: () => void };
      free -= next.bytes;
      next.resume();
    }
  };
  return {
    acquire(bytes) {
      if (bytes > limit) return Promise.reject(new Error(`a part of ${bytes} bytes exceeds the budget of ${limit}`));
      if (waiting.length === 0 && bytes <= free) {
        free -= bytes;
        return Promise.resolve();
      }
      return new Promise((resume) => waiting.push({ bytes, resume }));
    },
    release(bytes) {
      free += bytes;
      wake();
    },
  };
}

/** One part: its bytes (a view of a buffer charged to the budget) and whether the body ended with it. */
export interface Part {
  readonly bytes: Buffer;
  readonly last: boolean;
  /** Gives the part's buffer back to the budget; call once the part is sent (or abandoned). */
  release(): void;
}

/**
 * Cuts a body into parts of exactly `size` bytes (the last one shorter), each filled into one
 * buffer charged to `budget` before any of its bytes are read, so a process never holds more
 * than the budget in parts however many uploads run. Reads at most one chunk beyond a full part
 * to tell whether it is the last. Yields nothing for an empty body. The caller must release each
 * part, and at most one part is taken from the budget at a time per body.
 */
export async function* budgetedParts(
  source: AsyncIterable<unknown> | Iterable<unknown>,
  size: number,
  budget: ByteBudget,
): AsyncGenerator<Part> {
  const iterator =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      : (source as Iterable<unknown>)[Symbol.iterator]();
  const nextChunk = async (): Promise<Buffer | null> => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return null;
      const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value as string | Uint8Array);
      if (chunk.length > 0) return chunk;
    }
  };
  let pending = await nextChunk();
  try {
    while (pending !== null) {
      await budget.acquire(size);
      let released = false;
      const release = () => {
        if (!released) {
          released = true;
          budget.release(size);
        }
      };
      try {
        const buffer = Buffer.allocUnsafe(size);
        let filled = 0;
        while (pending !== null && filled < size) {
          const take = Math.min(size - filled, pending.length);
          pending.copy(buffer, filled, 0, take);
          filled += take;
          pending = take < pending.length ? pending.subarray(take) : await nextChunk();
        }
        yield { bytes: buffer.subarray(0, filled), last: pending === null, release };
      } finally {
        // A consumer that stopped early, or a body that failed, must not keep the budget.
        release();
      }
    }
  } finally {
    await iterator.return?.();
  }
}
