/**
 * Long synchronous work split into slices: `turn()` lets the event loop run (timers, sockets,
 * other requests) once `sliceMs` have passed since the last time it did, and costs nothing before.
 */
export interface EventLoopTurns {
  turn(): Promise<void> | undefined;
}

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Slices of at most about `sliceMs` of synchronous work (default 10 ms). */
export function eventLoopTurns(sliceMs = 10): EventLoopTurns {
  let since = performance.now();
  return {
    turn() {
      if (performance.now() - since < sliceMs) return undefined;
      return immediate().then(() => {
        since = performance.now();
      });
    },
  };
}
