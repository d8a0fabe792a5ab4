import { isRetriable, KbError } from '../../errors/kb-error.ts';

export interface InsertBufferOptions {
  /** A flush starts this long after the first row that waits for it. */
  readonly flushMs: number;
  /** A flush starts at once when this many rows wait. */
  readonly maxRows: number;
  /**
   * Rows held at most: an `add` beyond it waits for a flush (back pressure when the engine is down
   * for long), instead of growing the buffer without bound.
   */
  readonly maxHeldRows: number;
  /** Called with rows the engine refused for good (each was tried alone) and the error. */
  readonly onRefused: (rows: readonly Record<string, unknown>[], error: unknown) => void;
}

export interface InsertBuffer {
  /** Buffers rows; resolves at once unless `maxHeldRows` are held, then once a flush made room. */
  add(rows: readonly Record<string, unknown>[]): Promise<void>;
  /** Writes every row added so far; rejects when the engine cannot take them now (they stay held). */
  flush(): Promise<void>;
  /** Stops the timer and writes every row held (`flush`); the buffer takes no rows after. */
  close(): Promise<void>;
}

/**
 * Rows for one table, written in one insert per flush instead of one per row: a flush starts
 * `flushMs` after the first waiting row, or at once when `maxRows` wait, and one insert carries
 * every waiting row (each insert is a part ClickHouse writes and merges). Rows keep their order.
 *
 * A flush that fails because the engine is unavailable keeps the rows, in order, for the next one
 * (one `flushMs` later); a flush the engine refuses (a bad row) tries the rows one by one and hands
 * the refused ones to `onRefused`. Rows held when the process dies without `close` are lost: at
 * most `flushMs` worth, or what an unreachable engine kept waiting.
 */
export function createInsertBuffer(
  insert: (rows: Record<string, unknown>[]) => Promise<void>,
  options: InsertBufferOptions,
): InsertBuffer {
  let held: Record<string, unknown>[] = [];
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let closed = false;
  const roomWaiters: Array<() => void> = [];

  function schedule(delayMs: number): void {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      flush().catch(() => undefined);
    }, delayMs);
    // A pending flush never keeps the process alive; `close` writes what is held.
    timer.unref();
  }

  async function writeRefusingAlone(rows: Record<string, unknown>[]): Promise<void> {
    try {
      await insert(rows);
    } catch (error) {
      if (isRetriable(error) || rows.length === 1) {
        if (!isRetriable(error)) {
          options.onRefused(rows, error);
          return;
        }
        throw error;
      }
      for (const row of rows) await writeRefusingAlone([row]);
    }
  }

  async function drain(): Promise<void> {
    while (held.length > 0) {
      const rows = held;
      held = [];
      try {
        await writeRefusingAlone(rows);
      } catch (error) {
        held = [...rows, ...held];
        if (!closed) schedule(options.flushMs);
        throw error;
      } finally {
        while (held.length < options.maxHeldRows && roomWaiters.length > 0) roomWaiters.shift()?.();
      }
    }
  }

  function flush(): Promise<void> {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    // Rows added while a flush is in flight go out with the next one, after it.
    const previous = inFlight ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(drain);
    inFlight = next;
    void next
      .finally(() => {
        if (inFlight === next) inFlight = null;
      })
      .catch(() => undefined);
    return next;
  }

  return {
    async add(rows) {
      if (closed) throw new Error('The insert buffer is closed');
      held.push(...rows);
      if (held.length >= options.maxRows) flush().catch(() => undefined);
      else schedule(options.flushMs);
      if (held.length > options.maxHeldRows) await new Promise<void>((resolve) => roomWaiters.push(resolve));
    },
    flush,
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      try {
        await flush();
      } catch (error) {
        throw new KbError(
          'engine-unavailable',
          `${held.length} buffered row(s) could not be written before closing: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    },
  };
}
