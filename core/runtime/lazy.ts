/** A value built on first use, once, even under concurrent first calls; a failed build is retried next time. */
export function lazy<T>(build: () => Promise<T>): { get(): Promise<T>; peek(): Promise<T> | null } {
  let value: Promise<T> | null = null;
  return {
    get() {
      if (!value) {
        value = build();
        value.catch(() => {
          value = null;
        });
      }
      return value;
    },
    peek: () => value,
  };
}
