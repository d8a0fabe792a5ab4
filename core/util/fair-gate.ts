import { createFairShares } from './fair-shares.ts';

/**
 * A semaphore of `slots` whose waiting callers take turns by share (see {@link createFairShares}):
 * when a slot frees, the caller of the share that has held slots the least time goes next, in
 * arrival order within a share. The parse pool's threads and the embedding provider's calls go
 * through one, so one workspace's backlog delays another's work by at most the calls already
 * running.
 */
export interface FairGate {
  /** Runs `body` once a slot is free and it is the share's turn; the slot is held until it settles. */
  run<T>(share: string, body: () => Promise<T>): Promise<T>;
  /** Callers waiting for a slot. */
  readonly waiting: number;
  /** Refuses every caller from now on (and those waiting) with `error`. */
  close(error: Error): void;
}

export interface FairGateOptions {
  readonly slots: number;
  /** Most callers waiting; one more is refused with `busy()` at once. Default: unbounded. */
  readonly maxWaiting?: number;
  readonly busy?: () => Error;
}

export function createFairGate(options: FairGateOptions): FairGate {
  const slots = Math.max(1, Math.floor(options.slots));
  const shares = createFairShares();
  const queue: { share: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  let running = 0;
  let closedWith: Error | null = null;

  const acquire = (share: string): Promise<void> => {
    if (closedWith) return Promise.reject(closedWith);
    if (running < slots) {
      running += 1;
      return Promise.resolve();
    }
    if (options.maxWaiting !== undefined && queue.length >= options.maxWaiting) {
      return Promise.reject(options.busy?.() ?? new Error('too many callers waiting'));
    }
    return new Promise((resolve, reject) => queue.push({ share, resolve, reject }));
  };

  const release = (share: string, startedAt: number): void => {
    shares.charge(share, performance.now() - startedAt);
    const next = shares.pick(queue, (waiter) => waiter.share);
    if (next) {
      queue.splice(queue.indexOf(next), 1);
      next.resolve();
    } else running -= 1;
  };

  return {
    async run(share, body) {
      await acquire(share);
      const startedAt = performance.now();
      try {
        return await body();
      } finally {
        release(share, startedAt);
      }
    },
    get waiting() {
      return queue.length;
    },
    close(error) {
      closedWith = error;
      for (const waiter of queue.splice(0)) waiter.reject(error);
    },
  };
}
