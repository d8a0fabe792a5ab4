import { isRetriable, KbError } from '../../errors/kb-error.ts';

export interface InsertBufferOptions {
  /** A flush starts this long after the first row that waits for it (rows added meanwhile share its insert). */
  readonly flushMs: number;
  /** A flush starts at once when this many rows wait. */
  readonly maxRows: number;
  /**
   * Rows held at most: an `add` beyond it waits for a flush (back pressure when the engine is down
   * for long), instead of growing the buffer without bound.
   */
  readonly maxHeldRows: number;
  /** While the engine is unavailable, held rows are tried again this often (default: a second). */
  readonly retryMs?: number;
  /** Called with rows the engine refused for good (each was tried alone) and the error. */
  readonly onRefused: (rows: readonly Record<string, unknown>[], error: unknown) => void;
}

export interface InsertBuffer {
  /**
   * Adds rows and resolves once they are written; or, when the engine is unavailable, once a write
   * of them failed: they are then held and tried again (and `maxHeldRows` applies).
   */
  add(rows: readonly Record<string, unknown>[]): Promise<void>;
  /** Writes every row added so far; rejects when the engine cannot take them now (they stay held). */
  flush(): Promise<void>;
  /** Stops the timer and writes every row held (`flush`); the buffer takes no rows after. */
  close(): Promise<void>;
}

/** A row with the answer of the `add` call it came in, given once its first write is over. */
interface Held {
  readonly row: Record<string, unknown>;
  readonly settle: () => void;
}

/**
 * Rows for one table, written together: a flush starts `flushMs` after the first waiting row, or
 * at once when `maxRows` wait, and one insert carries every waiting row, so concurrent callers share
 * one insert (each is a part ClickHouse writes and merges) while each still waits only about
 * `flushMs` plus one insert. Rows added while an insert is in flight go out with the next one.
 * Rows keep their order.
 *
 * `add` resolves once its rows are written, so a row a caller was answered for survives the
 * process being killed. A flush that fails because the engine is unavailable settles the callers
 * anyway (the service stays available while the engine restarts) and keeps the rows, in order, for
 * the next try (`retryMs` later); those are lost only if the process dies before the engine comes
 * back. A flush the engine refuses (a bad row) tries the rows one by one and hands the refused ones
 * to `onRefused`.
 */
export function createInsertBuffer(
  insert: (rows: Record<string, unknown>[]) => Promise<void>,
  options: InsertBufferOptions,
): InsertBuffer {
  const retryMs = options.retryMs ?? 1_000;
  let held: Held[] = [];
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
      const batch = held;
      held = [];
      try {
        await writeRefusingAlone(batch.map((h) => h.row));
      } catch (error) {
        held = [...batch, ...held];
        if (!closed) schedule(retryMs);
        throw error;
      } finally {
        // Written, refused, or held for a later try: either way the callers are answered.
        for (const h of batch) h.settle();
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
      if (rows.length === 0) return;
      let pending = rows.length;
      const settled = new Promise<void>((resolve) => {
        for (const row of rows) {
          let done = false;
          const settle = () => {
            if (done) return;
            done = true;
            pending -= 1;
            if (pending === 0) resolve();
          };
          held.push({ row, settle });
        }
      });
      if (held.length >= options.maxRows) flush().catch(() => undefined);
      else schedule(options.flushMs);
      if (held.length > options.maxHeldRows) await new Promise<void>((resolve) => roomWaiters.push(resolve));
      await settled;
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
