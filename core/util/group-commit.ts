/**
 * Group commit: items submitted while a flush is in flight wait for it and then go out together in
 * the next flush; an item submitted while nothing is in flight goes out at once, so nothing waits
 * longer than one flush. Items keep their submission order, within a flush and across flushes.
 *
 * A flush that fails rejects every item in it with its error, or, with `isolateFailures`, flushes
 * each of them alone, so that one item the target refuses fails by itself.
 */
export function createGroupCommit<T>(
  flush: (items: T[]) => Promise<void>,
  options: { readonly maxItems?: number; readonly isolateFailures?: boolean } = {},
): (item: T) => Promise<void> {
  interface Waiting {
    readonly item: T;
    resolve(): void;
    reject(error: unknown): void;
  }
  const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
  let queue: Waiting[] = [];
  let flushing = false;

  async function flushAlone(entry: Waiting): Promise<void> {
    try {
      await flush([entry.item]);
      entry.resolve();
    } catch (error) {
      entry.reject(error);
    }
  }

  async function drain(): Promise<void> {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxItems);
      queue = queue.slice(batch.length);
      try {
        await flush(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        if (options.isolateFailures === true && batch.length > 1) {
          for (const entry of batch) await flushAlone(entry);
        } else {
          for (const entry of batch) entry.reject(error);
        }
      }
    }
    flushing = false;
  }

  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!flushing) void drain();
    });
}
