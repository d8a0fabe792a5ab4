import { afterEach, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { IdempotencyStore } from '../../../core/ports/idempotency-store/idempotency-store.port.ts';
import { createSqliteIdempotencyStore } from '../../../core/ports/idempotency-store/sqlite.adapter.ts';
import {
  createIdempotencyService,
  fingerprintOf,
  type HeldKey,
  type IdempotentStart,
} from '../../../core/services/idempotency.service.ts';
import type { RequestContext } from '../../../core/services/request-context.ts';

const ctx: RequestContext = { workspaceId: 'ws', keyId: 'key-1', traceId: 't' };
const HOUR = 3_600_000;
const created = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"d1"}' };

const stores: IdempotencyStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** The service over an in-memory store, with a clock the test moves. */
function setup(options: { waitMs?: number; leaseMs?: number } = {}) {
  const store = createSqliteIdempotencyStore({ file: ':memory:' });
  stores.push(store);
  const clock = { now: Date.now() };
  const service = createIdempotencyService({
    store,
    ttlMs: 24 * HOUR,
    leaseMs: options.leaseMs ?? 120_000,
    waitMs: options.waitMs ?? 0,
    now: () => clock.now,
  });
  return { service, clock };
}

function held(start: IdempotentStart): HeldKey {
  if (start.replay !== null) throw new Error('expected the key to be held');
  return start;
}

async function refusal(promise: Promise<unknown>): Promise<KbError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof KbError)) throw new Error(`expected a KbError, got ${String(error)}`);
  return error;
}

describe('idempotency service: keys', () => {
  const { service } = setup();

  it('takes 1 to 255 printable ASCII characters, trimmed, and a quoted string without its quotes', () => {
    expect(service.parseKey('  abc-123  ')).toBe('abc-123');
    expect(service.parseKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(service.parseKey('a b ~!')).toBe('a b ~!');
    expect(service.parseKey('"order \\"42\\" \\\\ x"')).toBe('order "42" \\ x');
  });

  it('refuses an empty, too long, non-ASCII or malformed key with idempotency-key-invalid', () => {
    for (const bad of ['', '   ', 'k'.repeat(256), 'clé', 'tab\there', '""', '"a"b"', '"bad \\x"']) {
      expect(() => service.parseKey(bad), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: 'idempotency-key-invalid' }),
      );
    }
  });
});

describe('idempotency service: claims', () => {
  it('runs the first request, and replays its answer to the same request later', async () => {
    const { service } = setup();
    const first = held(await service.begin(ctx, 'k', 'f'));
    expect(await first.complete(created)).toBe(true);
    expect(await service.begin(ctx, 'k', 'f')).toEqual({ replay: created });
  });

  it('refuses another request with the key, whether the first is running or answered', async () => {
    const { service } = setup({ waitMs: 10_000 });
    const first = held(await service.begin(ctx, 'k', 'f'));
    expect((await refusal(service.begin(ctx, 'k', 'other'))).code).toBe('idempotency-key-reused');
    await first.complete(created);
    expect((await refusal(service.begin(ctx, 'k', 'other'))).code).toBe('idempotency-key-reused');
  });

  it('answers 409 with a retry time to the same request while the first still runs past the wait', async () => {
    const { service } = setup({ waitMs: 0 });
    held(await service.begin(ctx, 'k', 'f'));
    const error = await refusal(service.begin(ctx, 'k', 'f'));
    expect(error.code).toBe('idempotency-key-in-use');
    expect(error.retryAfter).toBe(1);
  });

  it('lets a waiting request replay the first one’s answer once it is stored', async () => {
    const { service } = setup({ waitMs: 30_000 });
    const first = held(await service.begin(ctx, 'k', 'f'));
    const waiting = service.begin(ctx, 'k', 'f');
    setTimeout(() => void first.complete(created), 50);
    expect(await waiting).toEqual({ replay: created });
  });

  it('lets a waiting request run itself when the first gives the key back', async () => {
    const { service } = setup({ waitMs: 30_000 });
    const first = held(await service.begin(ctx, 'k', 'f'));
    const waiting = service.begin(ctx, 'k', 'f');
    setTimeout(() => void first.release(), 50);
    const second = held(await waiting);
    expect(await second.complete(created)).toBe(true);
  });

  it('lets a retry take over a claim whose holder is gone, and keeps the late holder from storing', async () => {
    const { service, clock } = setup({ leaseMs: 60_000 });
    const gone = held(await service.begin(ctx, 'k', 'f'));
    clock.now += 60_000;
    const retry = held(await service.begin(ctx, 'k', 'f'));
    expect(await gone.complete({ ...created, body: '{"id":"late"}' })).toBe(false);
    expect(await retry.complete(created)).toBe(true);
    expect(await service.begin(ctx, 'k', 'f')).toEqual({ replay: created });
  });

  it('forgets an answer after the retention time, and sweeps it', async () => {
    const { service, clock } = setup();
    await held(await service.begin(ctx, 'k', 'f')).complete(created);
    clock.now += 24 * HOUR - 1;
    expect(await service.begin(ctx, 'k', 'f')).toEqual({ replay: created });
    clock.now += 1;
    // Kept another retention time (counted absent), then swept.
    expect(await service.sweep()).toBe(0);
    clock.now += 24 * HOUR;
    expect(await service.sweep()).toBe(1);
    const next = held(await service.begin(ctx, 'k', 'f'));
    expect(next.write.resumed).toBe(false);
  });

  it('renews the claim of a request still running, so that a retry is not let in before it answers', async () => {
    const store = createSqliteIdempotencyStore({ file: ':memory:' });
    stores.push(store);
    // The real clock: the request holds its key three leases long.
    const service = createIdempotencyService({ store, ttlMs: 24 * HOUR, leaseMs: 300, waitMs: 0 });
    const running = held(await service.begin(ctx, 'k', 'f'));
    await new Promise((resolve) => setTimeout(resolve, 900));
    const retry = await refusal(service.begin(ctx, 'k', 'f'));
    expect(retry.code).toBe('idempotency-key-in-use');
    expect(await running.complete(created)).toBe(true);
    expect(await service.begin(ctx, 'k', 'f')).toEqual({ replay: created });
  });

  it('tells a request that resumes a claim of the same request ended without an answer, and no other', async () => {
    const { service, clock } = setup({ leaseMs: 60_000 });
    const first = held(await service.begin(ctx, 'k', 'f'));
    expect(first.write.resumed).toBe(false);
    // Its holder gone: the retry resumes it, under the same write key.
    clock.now += 60_000;
    const retry = held(await service.begin(ctx, 'k', 'f'));
    expect(retry.write).toEqual({ key: first.write.key, resumed: true });
    // Given back after a failure: the next one resumes it too.
    await retry.release();
    const afterFailure = held(await service.begin(ctx, 'k', 'f'));
    expect(afterFailure.write).toEqual({ key: first.write.key, resumed: true });
    // Another request with the key (once it is free) resumes nothing, and writes under another key.
    await afterFailure.release();
    const other = held(await service.begin(ctx, 'k', 'g'));
    expect(other.write.resumed).toBe(false);
    expect(other.write.key).not.toBe(first.write.key);
    await other.complete(created);
    // An answer forgotten after the retention time is not resumed either.
    clock.now += 24 * HOUR;
    expect(held(await service.begin(ctx, 'k', 'g')).write.resumed).toBe(false);
    // Write keys belong to their scope.
    const elsewhere = held(await service.begin({ ...ctx, keyId: 'key-2' }, 'k', 'f'));
    expect(elsewhere.write.key).not.toBe(first.write.key);
  });

  it('keeps the keys of each API key, workspace and account apart', async () => {
    const { service } = setup();
    await held(await service.begin(ctx, 'k', 'f')).complete(created);
    for (const other of [
      { ...ctx, keyId: 'key-2' },
      { ...ctx, workspaceId: 'ws-2' },
      { ...ctx, actorType: 'user' as const },
    ]) {
      expect((await service.begin(other, 'k', 'another request')).replay, JSON.stringify(other)).toBeNull();
    }
  });
});

describe('fingerprintOf', () => {
  it('is the same for the same JSON whatever the member order, and differs for any other value', () => {
    const a = fingerprintOf({ method: 'PATCH', body: { metadata: { a: 1, b: [1, 2] }, reason: 'x' } });
    expect(fingerprintOf({ body: { reason: 'x', metadata: { b: [1, 2], a: 1 } }, method: 'PATCH' })).toBe(a);
    expect(fingerprintOf({ method: 'PATCH', body: { metadata: { a: 1, b: [2, 1] }, reason: 'x' } })).not.toBe(a);
    expect(fingerprintOf({ method: 'PATCH', body: { metadata: { a: '1', b: [1, 2] }, reason: 'x' } })).not.toBe(a);
    expect(fingerprintOf({ method: 'PUT', body: { metadata: { a: 1, b: [1, 2] }, reason: 'x' } })).not.toBe(a);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
