/**
 * Refreshes of the same indexes, shared: a caller asking while one runs waits for the next one,
 * which every caller that asked meanwhile shares. A caller's writes finished before it asked, so
 * any refresh that starts after that makes them visible; concurrent stage handlers then cost one
 * refresh in flight and one queued, not one each.
 */
export function createSharedRefresh(refresh: (indexes: string) => Promise<void>): (indexes: string) => Promise<void> {
  const states = new Map<string, { running: Promise<void> | null; next: Promise<void> | null }>();
  return (indexes) => {
    let state = states.get(indexes);
    if (state === undefined) {
      state = { running: null, next: null };
      states.set(indexes, state);
    }
    const own = state;
    if (own.next !== null) return own.next;
    const start = (): Promise<void> => {
      const running: Promise<void> = refresh(indexes).finally(() => {
        if (own.running === running) own.running = null;
      });
      own.running = running;
      return running;
    };
    if (own.running === null) return start();
    own.next = own.running
      .catch(() => undefined)
      .then(() => {
        own.next = null;
        return start();
      });
    return own.next;
  };
}
