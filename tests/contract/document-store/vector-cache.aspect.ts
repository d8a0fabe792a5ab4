import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { axis, sha256, sorted, unit } from './fixtures.ts';

/** The vector cache by model and content hash. */
export function vectorCacheAspect(suite: ContractContext): void {
  const { store } = suite;
  describe('vector cache', () => {
    it('returns cached vectors by model and content hash', async () => {
      const model = `contract/cache-${randomUUID()}`;
      const [h1, h2, h3] = [randomUUID(), randomUUID(), randomUUID()].map(sha256) as [string, string, string];
      await store.putCachedVectors(
        model,
        new Map([
          [h1, axis(0)],
          [h2, unit([1, 2, 3])],
        ]),
      );
      const found = await store.getCachedVectors(model, [h1, h2, h3]);
      expect(sorted([...found.keys()])).toEqual(sorted([h1, h2]));
      expect(Array.from(found.get(h2)!)).toEqual(Array.from(unit([1, 2, 3])));
      expect((await store.getCachedVectors(`${model}-other`, [h1, h2])).size).toBe(0);
      expect((await store.getCachedVectors(model, [])).size).toBe(0);

      await store.putCachedVectors(model, new Map([[h1, axis(5)]]));
      expect(Array.from((await store.getCachedVectors(model, [h1])).get(h1)!)).toEqual(Array.from(axis(5)));
    });
  });
}
