/**
 * How the S3 adapter reads a streamed body into upload parts without holding more than a bounded
 * number of part buffers across all the uploads of the process.
 */

/**
 * The part buffers the uploads of a process share: at most `count` buffers of `size` bytes, made
 * on first need and reused (so a long run of uploads neither grows the process nor churns the
 * allocator); waiters queue in order.
 */
export interface PartBuffers {
  readonly size: number;
  acquire(): Promise<Buffer>;
  release(buffer: Buffer): void;
}

export function createPartBuffers(size: number, count: number): PartBuffers {
  const free: Buffer[] = [];
  let made = 0;
  const waiting: ((buffer: Buffer) => void)[] = [];
  return {
    size,
    acquire() {
      const buffer = free.pop();
      if (buffer !== undefined) return Promise.resolve(buffer);
      if (made < count) {
        made += 1;
        return Promise.resolve(Buffer.allocUnsafeSlow(size));
      }
      return new Promise((resume) => waiting.push(resume));
    },
    release(buffer) {
      const next = waiting.shift();
      if (next !== undefined) next(buffer);
      else free.push(buffer);
    },
  };
}

/** One part: its bytes (a view of a shared buffer) and whether the body ended with it. */
export interface Part {
  readonly bytes: Buffer;
  readonly last: boolean;
  /** Gives the part's buffer back; call once the part is sent (or abandoned). Its bytes are invalid after. */
  release(): void;
}

/**
 * Cuts a body into parts of exactly `buffers.size` bytes (the last one shorter), each filled into
 * a shared buffer taken before any of its bytes are read, so a process never holds more part
 * bytes than its buffers however many uploads run. Reads at most one chunk beyond a full part to
 * tell whether it is the last. Yields nothing for an empty body. A part's buffer goes back when
 * the caller releases it or asks for the next part (each body holds at most one at a time).
 */
export async function* budgetedParts(
  source: AsyncIterable<unknown> | Iterable<unknown>,
  buffers: PartBuffers,
): AsyncGenerator<Part> {
  const size = buffers.size;
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
      const buffer = await buffers.acquire();
      let released = false;
      const release = () => {
        if (!released) {
          released = true;
          buffers.release(buffer);
        }
      };
      try {
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
