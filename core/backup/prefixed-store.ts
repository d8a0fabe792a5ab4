import type { ObjectStore } from '../ports/object-store/object-store.port.ts';

/** `store` seen under `prefix/`: every key is prefixed on the way in and stripped on the way out. */
export function prefixedStore(store: ObjectStore, prefix: string): ObjectStore {
  if (prefix === '') return store;
  const base = `${prefix}/`;
  const full = (key: string) => `${base}${key}`;
  return {
    kind: store.kind,
    put: (key, body, options) =>
      store.put(full(key), body, options).then((info) => ({ ...info, key: info.key.slice(base.length) })),
    get: (key) => store.get(full(key)),
    getBuffer: (key) => store.getBuffer(full(key)),
    stat: async (key) => {
      const info = await store.stat(full(key));
      return info === null ? null : { ...info, key: info.key.slice(base.length) };
    },
    delete: (key) => store.delete(full(key)),
    deletePrefix: (key) => store.deletePrefix(full(key)),
    async *list(key) {
      for await (const found of store.list(full(key))) yield found.slice(base.length);
    },
    url: (key) => store.url(full(key)),
    sweepTemporary: (olderThanMs) => store.sweepTemporary(olderThanMs),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
