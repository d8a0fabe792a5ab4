/** Publishes in this process wake the consumers of the same file at once instead of at their next poll. */
const wakers = new Map<string, Set<() => void>>();

export function notifyPublished(file: string): void {
  for (const wake of wakers.get(file) ?? []) wake();
}

export function addWaker(file: string, wake: () => void): () => void {
  let set = wakers.get(file);
  if (!set) {
    set = new Set();
    wakers.set(file, set);
  }
  set.add(wake);
  return () => {
    set.delete(wake);
    if (set.size === 0) wakers.delete(file);
  };
}
