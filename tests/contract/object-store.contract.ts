import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../core/ports/object-store/object-store.port.ts';

export interface ObjectStoreFixture {
  readonly store: ObjectStore;
  cleanup(): Promise<void>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

/** A stream that yields `chunks` and then fails, as an aborted upload does. */
function failingStream(chunks: Buffer[]): Readable {
  let i = 0;
  return new Readable({
    read() {
      const chunk = chunks[i++];
      if (chunk) this.push(chunk);
      else this.destroy(new Error('client went away'));
    },
  });
}

/**
 * The object-store contract (see `object-store.port.ts`), runnable against any adapter. Every test
 * works under its own random key prefix, so a shared bucket or directory is fine.
 */
export function describeObjectStoreContract(name: string, make: () => Promise<ObjectStoreFixture>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fixture: ObjectStoreFixture;
    let store: ObjectStore;
    const base = `contract-${randomUUID()}`;
    const prefix = (label: string) => `${base}/${label}-${randomUUID().slice(0, 8)}`;

    beforeAll(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterAll(async () => {
      if (!fixture) return;
      await store.deletePrefix(`${base}/`).catch(() => undefined);
      await store.close();
      await fixture.cleanup();
    });

    it('names its kind and answers ping', async () => {
      expect(typeof store.kind).toBe('string');
      expect(store.kind.length).toBeGreaterThan(0);
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('stores a string, a Buffer and a stream and returns the same bytes', async () => {
      const p = prefix('roundtrip');
      const big = randomBytes(3 * 1024 * 1024 + 17);
      const streamed = Readable.from(
        (function* () {
          for (let offset = 0; offset < big.length; offset += 64 * 1024) yield big.subarray(offset, offset + 64 * 1024);
        })(),
      );
      const text = 'héllo wörld\n';
      const before = Date.now() - 60_000;
      expect(await store.put(`${p}/text.txt`, text, { contentType: 'text/plain' })).toEqual({
        key: `${p}/text.txt`,
        size: Buffer.byteLength(text),
        modifiedAt: expect.any(Number),
      });
      expect((await store.stat(`${p}/text.txt`))?.modifiedAt).toBeGreaterThan(before);
      expect(await store.put(`${p}/bytes.bin`, Buffer.from([0, 1, 2, 255]))).toMatchObject({
        key: `${p}/bytes.bin`,
        size: 4,
      });
      expect(await store.put(`${p}/big.bin`, streamed)).toMatchObject({ key: `${p}/big.bin`, size: big.length });

      expect((await store.getBuffer(`${p}/text.txt`)).toString('utf8')).toBe(text);
      expect(await store.getBuffer(`${p}/bytes.bin`)).toEqual(Buffer.from([0, 1, 2, 255]));
      expect((await readAll(await store.get(`${p}/big.bin`))).equals(big)).toBe(true);
      expect(await store.stat(`${p}/big.bin`)).toMatchObject({ key: `${p}/big.bin`, size: big.length });
    });

    it('stores an empty object', async () => {
      const key = `${prefix('empty')}/nothing`;
      expect(await store.put(key, Buffer.alloc(0))).toMatchObject({ key, size: 0 });
      expect((await store.getBuffer(key)).length).toBe(0);
      expect(await store.stat(key)).toMatchObject({ key, size: 0 });
    });

    it('overwrites an existing key (last writer wins) and rewriting the same bytes changes nothing', async () => {
      const key = `${prefix('overwrite')}/doc.bin`;
      await store.put(key, 'first version, longer');
      await store.put(key, 'second');
      expect((await store.getBuffer(key)).toString()).toBe('second');
      expect(await store.stat(key)).toMatchObject({ key, size: 6 });
      await store.put(key, 'second');
      expect((await store.getBuffer(key)).toString()).toBe('second');
      expect(await collect(store.list(key))).toEqual([key]);
    });

    it('rejects get and getBuffer of a missing key with not-found, and stat returns null', async () => {
      const key = `${prefix('missing')}/nope.bin`;
      await expect(store.get(key)).rejects.toMatchObject({ code: 'not-found' });
      await expect(store.getBuffer(key)).rejects.toMatchObject({ code: 'not-found' });
      expect(await store.stat(key)).toBeNull();
    });

    it('treats a key prefix of stored objects as missing, not as an object', async () => {
      const p = prefix('dirlike');
      await store.put(`${p}/a/b.txt`, 'x');
      expect(await store.stat(`${p}/a`)).toBeNull();
      await expect(store.getBuffer(`${p}/a`)).rejects.toMatchObject({ code: 'not-found' });
    });

    it('deletes idempotently', async () => {
      const key = `${prefix('delete')}/x.txt`;
      await store.put(key, 'bye');
      await store.delete(key);
      expect(await store.stat(key)).toBeNull();
      await expect(store.getBuffer(key)).rejects.toMatchObject({ code: 'not-found' });
      await expect(store.delete(key)).resolves.toBeUndefined();
      await expect(store.delete(`${prefix('never')}/y.txt`)).resolves.toBeUndefined();
    });

    it('lists keys under a prefix in lexicographic order, nested keys included', async () => {
      const p = prefix('list');
      const keys = [`${p}/b`, `${p}/a/z`, `${p}/a-c`, `${p}/a0`, `${p}/A`, `${p}/a/b/c`, `${p}/a.x`, `${p}/_u`];
      for (const key of keys) await store.put(key, key);
      await store.put(`${p}-sibling/outside`, 'x');
      const sorted = [...keys].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      expect(await collect(store.list(`${p}/`))).toEqual(sorted);
      expect(await collect(store.list(`${p}/a/`))).toEqual([`${p}/a/b/c`, `${p}/a/z`]);
      // A prefix may end inside a segment.
      expect(await collect(store.list(`${p}/a`))).toEqual(sorted.filter((k) => k.startsWith(`${p}/a`)));
      expect(await collect(store.list(`${prefix('nothing-here')}/`))).toEqual([]);
      await store.deletePrefix(`${p}-sibling/`);
    });

    it('deletes every object under a prefix, counts them, and leaves other keys alone', async () => {
      const p = prefix('deleteprefix');
      const doomed = [`${p}/doc/1/a`, `${p}/doc/1/b`, `${p}/doc/1/deep/c`, `${p}/doc/10/x`];
      for (const key of doomed) await store.put(key, 'x');
      await store.put(`${p}/doc/2/keep`, 'keep');
      await store.put(`${p}/doc-1`, 'keep');
      expect(await store.deletePrefix(`${p}/doc/1/`)).toBe(3);
      expect(await collect(store.list(`${p}/`))).toEqual([`${p}/doc-1`, `${p}/doc/10/x`, `${p}/doc/2/keep`]);
      expect(await store.deletePrefix(`${p}/doc/1/`)).toBe(0);
      expect(await store.deletePrefix(`${p}/doc/1`)).toBe(1);
      expect(await collect(store.list(`${p}/`))).toEqual([`${p}/doc-1`, `${p}/doc/2/keep`]);
      expect((await store.getBuffer(`${p}/doc/2/keep`)).toString()).toBe('keep');
    });

    it('rejects keys with "..", a leading "/", empty segments or other characters with bad-request', async () => {
      const p = prefix('badkeys');
      const bad = [
        '../escape',
        `${p}/../../escape`,
        `/${p}/abs`,
        `${p}//double`,
        `${p}/sp ace`,
        `${p}/back\\slash`,
        `${p}/ümlaut`,
        `${p}/q?x`,
        `${p}/nul\u0000`,
        `${p}/trailing/`,
        '',
      ];
      for (const key of bad) {
        await expect(store.put(key, 'x'), key).rejects.toMatchObject({ code: 'bad-request' });
        await expect(store.getBuffer(key), key).rejects.toMatchObject({ code: 'bad-request' });
        await expect(store.get(key), key).rejects.toMatchObject({ code: 'bad-request' });
        await expect(store.stat(key), key).rejects.toMatchObject({ code: 'bad-request' });
        await expect(store.delete(key), key).rejects.toMatchObject({ code: 'bad-request' });
      }
      await expect(collect(store.list('../'))).rejects.toMatchObject({ code: 'bad-request' });
      await expect(store.deletePrefix('/etc/')).rejects.toMatchObject({ code: 'bad-request' });
      expect(await collect(store.list(`${p}/`))).toEqual([]);
    });

    it('accepts keys made of letters, digits, ".", "_", "-" and "/"', async () => {
      const key = `${prefix('goodkeys')}/Doc_1.v2-final/.hidden/..dots..`;
      await store.put(key, 'ok');
      expect((await store.getBuffer(key)).toString()).toBe('ok');
    });

    it('leaves no object behind when the body stream fails, and keeps the previous object', async () => {
      const p = prefix('failed');
      const fresh = `${p}/fresh.bin`;
      await expect(store.put(fresh, failingStream([randomBytes(100_000), randomBytes(100_000)]))).rejects.toThrow();
      expect(await store.stat(fresh)).toBeNull();
      await expect(store.getBuffer(fresh)).rejects.toMatchObject({ code: 'not-found' });

      const existing = `${p}/existing.bin`;
      await store.put(existing, 'the old content');
      await expect(store.put(existing, failingStream([randomBytes(50_000)]))).rejects.toThrow();
      expect((await store.getBuffer(existing)).toString()).toBe('the old content');
      expect(await collect(store.list(`${p}/`))).toEqual([existing]);
    });

    it('never shows a partly written object while a put is in progress', async () => {
      const key = `${prefix('partial')}/slow.bin`;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = randomBytes(256 * 1024);
      const second = randomBytes(256 * 1024);
      const body = Readable.from(
        (async function* () {
          yield first;
          await gate;
          yield second;
        })(),
      );
      const putting = store.put(key, body);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await store.stat(key)).toBeNull();
      expect(await collect(store.list(key))).toEqual([]);
      release();
      expect(await putting).toMatchObject({ key, size: first.length + second.length });
      expect((await store.getBuffer(key)).equals(Buffer.concat([first, second]))).toBe(true);
    });

    it('keeps concurrent writers to one key whole: the object is one of the written bodies', async () => {
      const key = `${prefix('race')}/same.bin`;
      const bodies = Array.from({ length: 5 }, () => randomBytes(200_000));
      await Promise.all(bodies.map((body) => store.put(key, body)));
      const stored = await store.getBuffer(key);
      expect(bodies.some((body) => body.equals(stored))).toBe(true);
    });

    it('gives each object a URL that names its key', async () => {
      const key = `${prefix('url')}/file.txt`;
      await store.put(key, 'x');
      const url = store.url(key);
      expect(() => new URL(url)).not.toThrow();
      expect(url.endsWith(key)).toBe(true);
      expect(() => store.url('../escape')).toThrow();
    });
  });
}
