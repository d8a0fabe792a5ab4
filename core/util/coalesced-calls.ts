/**
 * Calls made while an earlier batch is in flight wait for it and then go out together, as one
 * batch: a call made while nothing is in flight goes out at once (or after `gatherMs`, gathering
 * the calls made meanwhile), so none waits longer than one batch (and the gathering time), and
 * concurrent callers (the stage handlers of many documents) share one request instead
 * of sending one each. Each call gets its own answer, in the order the batch returns them (one per
 * item, in order); a batch that fails rejects every call in it with its error.
 */
export function createCoalescedCalls<I, O>(
  run: (items: I[]) => Promise<O[]>,
  options: { readonly maxItems?: number; readonly gatherMs?: number } = {},
): (item: I) => Promise<O> {
  interface Waiting {
    readonly item: I;
    resolve(value: O): void;
    reject(error: unknown): void;
  }
  const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
  let queue: Waiting[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    if ((options.gatherMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, options.gatherMs));
    while (queue.length > 0) {
      const batch = queue.slice(0, maxItems);
      queue = queue.slice(batch.length);
      try {
        const answers = await run(batch.map((entry) => entry.item));
        batch.forEach((entry, i) => {
          entry.resolve(answers[i] as O);
        });
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    running = false;
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running) void drain();
    });
}
