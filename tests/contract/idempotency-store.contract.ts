import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ClaimRequest,
  IdempotencyStore,
  StoredResponse,
} from '../../core/ports/idempotency-store/idempotency-store.port.ts';

export interface IdempotencyStoreFixture {
  readonly store: IdempotencyStore;
  /** Another store over the same storage, as a second process would open it. */
  openAnother(): Promise<IdempotencyStore>;
  cleanup(): Promise<void>;
}

const NOW = 1_800_000_000_000;
const MINUTE = 60_000;
const DAY = 86_400_000;

const created: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: '{"document_id":"0199","name":"notes — été.md","status":"pending"}',
};

/** A claim of a fresh key in a fresh scope, at NOW, lapsing a minute later. */
function claimRequest(overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    scope: `ws-${randomUUID()}/key-${randomUUID()}`,
    key: `order-${randomUUID()}`,
    fingerprint: 'POST /documents sha256:aaaa',
    token: randomUUID(),
    nowMs: NOW,
    expiresAtMs: NOW + MINUTE,
    ...overrides,
  };
}

/** The contract of `IdempotencyStore` (see its TSDoc), run against every adapter. */
export function describeIdempotencyStoreContract(name: string, open: () => Promise<IdempotencyStoreFixture>): void {
  describe(`idempotency store contract: ${name}`, () => {
    let fixture: IdempotencyStoreFixture;
    let store: IdempotencyStore;

    beforeAll(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('claims a fresh key, and answers the held claim to a second claimer without changing it', async () => {
      const first = claimRequest();
      const outcome = await store.claim(first);
      expect(outcome.claimed).toBe(true);
      expect(outcome.record).toEqual({
        scope: first.scope,
        key: first.key,
        fingerprint: first.fingerprint,
        token: first.token,
        state: 'in-progress',
        createdAtMs: NOW,
        expiresAtMs: NOW + MINUTE,
        response: null,
      });
      expect(outcome.claimed && outcome.replaced).toBeNull();
      const second = await store.claim({ ...first, token: randomUUID(), fingerprint: 'other', nowMs: NOW + 1000 });
      expect(second).toEqual({ claimed: false, record: outcome.record });
      expect(await store.lookup(first.scope, first.key, NOW + 1000)).toEqual(outcome.record);
    });

    it('keeps the answer of a completed claim, byte for byte, and answers it to later claimers', async () => {
      const first = claimRequest();
      await store.claim(first);
      expect(await store.complete(first.scope, first.key, first.token, created, NOW + DAY)).toBe(true);
      const later = await store.claim({ ...first, token: randomUUID(), nowMs: NOW + 2 * MINUTE });
      expect(later.claimed).toBe(false);
      expect(later.record).toMatchObject({ state: 'completed', token: first.token, expiresAtMs: NOW + DAY });
      expect(later.record.response).toEqual(created);
      expect(await store.lookup(first.scope, first.key, NOW + DAY - 1)).toEqual(later.record);
    });

    it('completes and releases only for the claim’s own token, and a completed key is not released', async () => {
      const first = claimRequest();
      await store.claim(first);
      expect(await store.complete(first.scope, first.key, 'another-token', created, NOW + DAY)).toBe(false);
      expect(await store.release(first.scope, first.key, 'another-token', NOW)).toBe(false);
      expect((await store.lookup(first.scope, first.key, NOW))?.state).toBe('in-progress');

      expect(await store.complete(first.scope, first.key, first.token, created, NOW + DAY)).toBe(true);
      expect(await store.complete(first.scope, first.key, first.token, created, NOW + DAY)).toBe(false);
      expect(await store.release(first.scope, first.key, first.token, NOW)).toBe(false);
      expect((await store.lookup(first.scope, first.key, NOW))?.response).toEqual(created);
    });

    it('frees a released key at once for the next claim, whatever that one’s fingerprint, and tells it what it replaced', async () => {
      const first = claimRequest();
      const { record } = await store.claim(first);
      expect(await store.release(first.scope, first.key, first.token, NOW + 1000)).toBe(true);
      expect(await store.lookup(first.scope, first.key, NOW + 1000)).toBeNull();
      expect(await store.release(first.scope, first.key, first.token, NOW + 1000)).toBe(false);
      const next = await store.claim({
        ...first,
        token: randomUUID(),
        fingerprint: 'PATCH /documents/x',
        nowMs: NOW + 2000,
      });
      expect(next.claimed).toBe(true);
      expect(next.record.fingerprint).toBe('PATCH /documents/x');
      // The released claim, as it was but lapsed at the release.
      expect(next.claimed && next.replaced).toEqual({ ...record, expiresAtMs: NOW + 1000 });
      expect(await store.complete(first.scope, first.key, first.token, created, NOW + DAY)).toBe(false);
    });

    it('lets a lapsed claim be taken over, tells the taker what it replaced, and refuses the lapsed holder’s completion', async () => {
      const first = claimRequest();
      const { record } = await store.claim(first);
      const taker = { ...first, token: randomUUID(), nowMs: NOW + MINUTE, expiresAtMs: NOW + 2 * MINUTE };
      const outcome = await store.claim(taker);
      expect(outcome.claimed).toBe(true);
      expect(outcome.record.token).toBe(taker.token);
      expect(outcome.claimed && outcome.replaced).toEqual(record);
      expect(await store.complete(first.scope, first.key, first.token, created, NOW + DAY)).toBe(false);
      expect(await store.release(first.scope, first.key, first.token, NOW + MINUTE)).toBe(false);
      expect(await store.complete(first.scope, first.key, taker.token, created, NOW + DAY)).toBe(true);
    });

    it('renews a live claim for its holder only, so that it lapses later', async () => {
      const first = claimRequest();
      await store.claim(first);
      expect(await store.renew(first.scope, first.key, 'another-token', NOW + 1000, NOW + 3 * MINUTE)).toBe(false);
      expect(await store.renew(first.scope, first.key, first.token, NOW + 1000, NOW + 3 * MINUTE)).toBe(true);
      // Past the first expiry, the claim still holds.
      const during = await store.claim({ ...first, token: randomUUID(), nowMs: NOW + 2 * MINUTE });
      expect(during).toMatchObject({ claimed: false, record: { token: first.token, expiresAtMs: NOW + 3 * MINUTE } });
      // A lapsed claim is not renewed, nor a completed one.
      expect(await store.renew(first.scope, first.key, first.token, NOW + 3 * MINUTE, NOW + 4 * MINUTE)).toBe(false);
      const other = claimRequest();
      await store.claim(other);
      await store.complete(other.scope, other.key, other.token, created, NOW + DAY);
      expect(await store.renew(other.scope, other.key, other.token, NOW, NOW + 2 * MINUTE)).toBe(false);
      expect((await store.lookup(other.scope, other.key, NOW))?.expiresAtMs).toBe(NOW + DAY);
    });

    it('forgets a completed answer once it expires', async () => {
      const first = claimRequest();
      await store.claim(first);
      await store.complete(first.scope, first.key, first.token, created, NOW + DAY);
      expect(await store.lookup(first.scope, first.key, NOW + DAY)).toBeNull();
      const again = await store.claim({ ...first, token: randomUUID(), nowMs: NOW + DAY, expiresAtMs: NOW + DAY + 1 });
      expect(again.claimed).toBe(true);
      expect(again.record.state).toBe('in-progress');
      expect(again.claimed && again.replaced).toMatchObject({
        state: 'completed',
        token: first.token,
        response: created,
      });
    });

    it('keeps keys apart by scope, and compares keys exactly', async () => {
      const base = claimRequest({ key: 'Order 42/"a"' });
      expect((await store.claim(base)).claimed).toBe(true);
      // The same key of another client, and keys that differ only in case or by an escape.
      for (const other of [
        { scope: `${base.scope}-2` },
        { key: 'order 42/"a"' },
        { key: 'Order 42%2F"a"' },
        { key: 'Order 42/"a" ' },
      ]) {
        expect((await store.claim({ ...base, ...other, token: randomUUID() })).claimed, JSON.stringify(other)).toBe(
          true,
        );
      }
      // Joining scope and key must not make two pairs one.
      const joined = claimRequest({ scope: 'ws/a', key: 'b:c' });
      expect((await store.claim(joined)).claimed).toBe(true);
      expect((await store.claim({ ...joined, scope: 'ws/a:b', key: 'c', token: randomUUID() })).claimed).toBe(true);
      const long = claimRequest({ key: `k${'~'.repeat(254)}` });
      expect((await store.claim(long)).claimed).toBe(true);
      expect((await store.lookup(long.scope, long.key, NOW))?.key).toBe(long.key);
    });

    it('lets exactly one of many simultaneous claimers of one key claim it', async () => {
      const base = claimRequest();
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.claim({ ...base, token: `t-${i}`, fingerprint: `f-${i}` })),
      );
      const winners = outcomes.filter((o) => o.claimed);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.record;
      for (const o of outcomes) expect(o.record).toEqual(winner);
    });

    it('lets exactly one of many simultaneous takers-over of a lapsed claim have it', async () => {
      const base = claimRequest();
      await store.claim(base);
      const later = { nowMs: NOW + 2 * MINUTE, expiresAtMs: NOW + 3 * MINUTE };
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claim({ ...base, ...later, token: `late-${i}` })),
      );
      expect(outcomes.filter((o) => o.claimed)).toHaveLength(1);
      expect(new Set(outcomes.map((o) => o.record.token)).size).toBe(1);
    });

    it('shares keys with another store over the same storage: one claim between them, answers seen by both', async () => {
      const other = await fixture.openAnother();
      try {
        const base = claimRequest();
        const outcomes = await Promise.all([
          store.claim({ ...base, token: 'here' }),
          other.claim({ ...base, token: 'there' }),
          store.claim({ ...base, token: 'here-2' }),
          other.claim({ ...base, token: 'there-2' }),
        ]);
        expect(outcomes.filter((o) => o.claimed)).toHaveLength(1);
        const holder = outcomes.find((o) => o.claimed)!.record.token;
        const holderStore = holder.startsWith('here') ? store : other;
        const otherStore = holderStore === store ? other : store;
        expect(await holderStore.complete(base.scope, base.key, holder, created, NOW + DAY)).toBe(true);
        expect((await otherStore.lookup(base.scope, base.key, NOW))?.response).toEqual(created);
      } finally {
        await other.close();
      }
    });

    it('sweeps expired records of either state, released ones too, and only those', async () => {
      const lapsed = claimRequest({ expiresAtMs: NOW + 10 });
      const answered = claimRequest();
      const released = claimRequest({ expiresAtMs: NOW + DAY });
      const live = claimRequest({ expiresAtMs: NOW + DAY });
      const liveAnswered = claimRequest();
      for (const request of [lapsed, answered, released, live, liveAnswered]) await store.claim(request);
      await store.complete(answered.scope, answered.key, answered.token, created, NOW + 20);
      await store.release(released.scope, released.key, released.token, NOW + 15);
      await store.complete(liveAnswered.scope, liveAnswered.key, liveAnswered.token, created, NOW + DAY);
      // Other tests' records lapse too; those of this one are certainly among the removed.
      expect(await store.sweep(NOW + 20)).toBeGreaterThanOrEqual(3);
      expect(await store.lookup(lapsed.scope, lapsed.key, NOW)).toBeNull();
      expect(await store.lookup(answered.scope, answered.key, NOW)).toBeNull();
      // Gone, not only lapsed: a claim now replaces nothing.
      const after = await store.claim({ ...released, token: randomUUID(), nowMs: NOW + 30 });
      expect(after.claimed && after.replaced).toBeNull();
      expect((await store.lookup(live.scope, live.key, NOW))?.token).toBe(live.token);
      expect((await store.lookup(liveAnswered.scope, liveAnswered.key, NOW))?.response).toEqual(created);
      expect(await store.sweep(NOW + 20)).toBe(0);
    });
  });
}
