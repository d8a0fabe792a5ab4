import { createHash, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  ApiKeyRecord,
  AuditAction,
  AuditEntry,
  SessionRecord,
  UserRecord,
} from '../../core/model/account-records.model.ts';
import type { AccountStore } from '../../core/ports/account-store/account-store.port.ts';

export interface AccountStoreFixture {
  readonly store: AccountStore;
  cleanup(): Promise<void>;
}

/** How long a store may take to show a write (e.g. an engine applying merges late). */
const EVENTUALLY = { timeout: 15_000, interval: 100 };

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const secret = `ink_${randomUUID().replaceAll('-', '')}`;
  return {
    id: randomUUID(),
    name: 'contract key',
    prefix: secret.slice(0, 12),
    hash: createHash('sha256').update(secret).digest('hex'),
    workspaceId: `ws-${randomUUID()}`,
    permissions: ['read', 'search'],
    plan: 'pro',
    createdAt: '2024-05-01T10:00:00.000Z',
    revokedAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

function userRecord(overrides: Partial<UserRecord> = {}): UserRecord {
  return {
    id: randomUUID(),
    email: `person-${randomUUID()}@example.com`,
    passwordHash: `scrypt$16384$8$1$${randomUUID()}$${randomUUID()}`,
    role: 'member',
    workspaceIds: [`ws-${randomUUID()}`],
    createdAt: '2024-05-01T10:00:00.000Z',
    passwordGenerated: false,
    ...overrides,
  };
}

function sessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: createHash('sha256').update(randomUUID()).digest('hex'),
    userId: randomUUID(),
    csrfToken: randomUUID(),
    createdAt: '2030-05-01T10:00:00.000Z',
    expiresAt: '2030-05-01T22:00:00.000Z',
    revokedAt: null,
    ...overrides,
  };
}

function auditEntry(workspaceId: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: uuidv7(),
    action: 'create',
    workspaceId,
    documentId: `doc-${randomUUID()}`,
    actor: { type: 'api_key', id: 'key-1' },
    timestamp: new Date().toISOString(),
    version: 1,
    before: null,
    after: { version: 1, metadata: { title: 'Guide', tags: ['a', 'b'] } },
    changeReason: null,
    traceId: randomUUID(),
    ...overrides,
  };
}

/**
 * The account-store contract (see `account-store.port.ts`), runnable against any adapter. Every test
 * uses fresh random workspace, key and instance ids, so a shared database is fine.
 */
export function describeAccountStoreContract(name: string, make: () => Promise<AccountStoreFixture>): void {
  describe(`AccountStore contract: ${name}`, () => {
    let fixture: AccountStoreFixture;
    let store: AccountStore;

    beforeAll(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterAll(async () => {
      if (!fixture) return;
      await store.close();
      await fixture.cleanup();
    });

    it('names its kind and answers ping', async () => {
      expect(store.kind.length).toBeGreaterThan(0);
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('API keys', () => {
      it('stores a key and finds it by id and by hash, unchanged', async () => {
        const key = keyRecord({ permissions: ['read', 'search', 'write'], plan: 'enterprise' });
        await store.createKey(key);
        expect(await store.getKey(key.id)).toEqual(key);
        expect(await store.findKeyByHash(key.hash)).toEqual(key);
        expect(await store.getKey(randomUUID())).toBeNull();
        expect(await store.findKeyByHash(createHash('sha256').update(randomUUID()).digest('hex'))).toBeNull();
      });

      it('finds several keys by hash at once, revoked ones too, unknown ones absent', async () => {
        const a = keyRecord();
        const b = keyRecord({ plan: 'pro' });
        await store.createKey(a);
        await store.createKey(b);
        await store.revokeKey(b.id, '2024-06-01T00:00:00.000Z');
        const unknown = createHash('sha256').update(randomUUID()).digest('hex');
        const found = await store.findKeysByHash([a.hash, b.hash, unknown, a.hash]);
        expect([...found.keys()].sort()).toEqual([a.hash, b.hash].sort());
        expect(found.get(a.hash)).toEqual(a);
        expect(found.get(b.hash)?.revokedAt).toBe('2024-06-01T00:00:00.000Z');
        expect((await store.findKeysByHash([])).size).toBe(0);
      });

      it('rejects a second key with the same id or the same hash with conflict', async () => {
        const key = keyRecord();
        await store.createKey(key);
        await expect(store.createKey(keyRecord({ id: key.id }))).rejects.toMatchObject({ code: 'conflict' });
        await expect(store.createKey(keyRecord({ hash: key.hash }))).rejects.toMatchObject({ code: 'conflict' });
        expect(await store.getKey(key.id)).toEqual(key);
      });

      it('lists keys of one workspace, or all keys, and counts them', async () => {
        const before = await store.countKeys();
        const workspaceId = `ws-${randomUUID()}`;
        const mine = [
          keyRecord({ workspaceId, createdAt: '2024-05-01T10:00:00.000Z' }),
          keyRecord({ workspaceId, createdAt: '2024-05-02T10:00:00.000Z' }),
        ];
        const other = keyRecord();
        for (const key of [...mine, other]) await store.createKey(key);
        const listed = await store.listKeys(workspaceId);
        expect(listed.map((k) => k.id).sort()).toEqual(mine.map((k) => k.id).sort());
        expect(listed.every((k) => k.workspaceId === workspaceId)).toBe(true);
        const all = (await store.listKeys()).map((k) => k.id);
        for (const key of [...mine, other]) expect(all).toContain(key.id);
        expect(await store.countKeys()).toBe(before + 3);
        expect(await store.listKeys(`ws-${randomUUID()}`)).toEqual([]);
      });

      it('revokes idempotently, keeping the first revocation time; unknown ids return false', async () => {
        const key = keyRecord();
        await store.createKey(key);
        expect(await store.revokeKey(key.id, '2024-06-01T00:00:00.000Z')).toBe(true);
        expect(await store.revokeKey(key.id, '2024-07-01T00:00:00.000Z')).toBe(true);
        await vi.waitFor(async () => {
          expect((await store.getKey(key.id))?.revokedAt).toBe('2024-06-01T00:00:00.000Z');
        }, EVENTUALLY);
        // Revoked keys are still found by hash; the caller decides.
        expect((await store.findKeyByHash(key.hash))?.revokedAt).toBe('2024-06-01T00:00:00.000Z');
        expect(await store.revokeKey(randomUUID(), '2024-06-01T00:00:00.000Z')).toBe(false);
      });

      it('records last use and never moves it back', async () => {
        const a = keyRecord();
        const b = keyRecord();
        await store.createKey(a);
        await store.createKey(b);
        await store.touchKeys(
          new Map([
            [a.id, '2024-06-01T12:00:00.000Z'],
            [b.id, '2024-06-02T12:00:00.000Z'],
          ]),
        );
        await store.touchKeys(new Map([[a.id, '2024-06-01T11:00:00.000Z']]));
        await store.touchKeys(new Map([[randomUUID(), '2024-06-01T11:00:00.000Z']]));
        await vi.waitFor(async () => {
          expect((await store.getKey(a.id))?.lastUsedAt).toBe('2024-06-01T12:00:00.000Z');
          expect((await store.getKey(b.id))?.lastUsedAt).toBe('2024-06-02T12:00:00.000Z');
        }, EVENTUALLY);
        await store.touchKeys(new Map([[a.id, '2024-06-03T09:30:00.000Z']]));
        await vi.waitFor(async () => {
          expect((await store.getKey(a.id))?.lastUsedAt).toBe('2024-06-03T09:30:00.000Z');
        }, EVENTUALLY);
        expect(await store.getKey(randomUUID())).toBeNull();
      });
    });

    describe('dashboard accounts', () => {
      it('stores an account and finds it by id and by email in any case, unchanged', async () => {
        const user = userRecord({ role: 'owner', workspaceIds: ['default', `ws-${randomUUID()}`] });
        await store.createUser(user);
        expect(await store.getUser(user.id)).toEqual(user);
        expect(await store.findUserByEmail(user.email.toUpperCase())).toEqual(user);
        expect(await store.getUser(randomUUID())).toBeNull();
        expect(await store.findUserByEmail(`nobody-${randomUUID()}@example.com`)).toBeNull();
        expect((await store.listUsers()).map((u) => u.id)).toContain(user.id);
      });

      it('rejects a second account with the same id or the same email (any case) with conflict', async () => {
        const before = await store.countUsers();
        const user = userRecord();
        await store.createUser(user);
        await expect(store.createUser(userRecord({ id: user.id }))).rejects.toMatchObject({ code: 'conflict' });
        await expect(store.createUser(userRecord({ email: user.email.toUpperCase() }))).rejects.toMatchObject({
          code: 'conflict',
        });
        expect(await store.countUsers()).toBe(before + 1);
        expect(await store.getUser(user.id)).toEqual(user);
      });

      it('changes a password hash, seen by the next read by id and by email', async () => {
        const user = userRecord();
        await store.createUser(user);
        expect(await store.setPassword(user.id, 'scrypt$new', '2030-01-01T00:00:00.000Z')).toBe(true);
        expect(await store.getUser(user.id)).toEqual({ ...user, passwordHash: 'scrypt$new' });
        expect((await store.findUserByEmail(user.email))?.passwordHash).toBe('scrypt$new');
        expect(await store.setPassword(user.id, 'scrypt$newer', '2030-01-02T00:00:00.000Z')).toBe(true);
        expect((await store.getUser(user.id))?.passwordHash).toBe('scrypt$newer');
        expect(await store.setPassword(randomUUID(), 'scrypt$x', '2030-01-01T00:00:00.000Z')).toBe(false);
      });

      it('keeps the mark of a generated password until a chosen one replaces it, and sets it again on a reset', async () => {
        const generated = userRecord({ passwordGenerated: true });
        const chosen = userRecord();
        await store.createUser(generated);
        await store.createUser(chosen);
        expect(await store.getUser(generated.id)).toEqual(generated);
        expect((await store.findUserByEmail(generated.email))?.passwordGenerated).toBe(true);
        expect((await store.listUsers()).find((u) => u.id === generated.id)?.passwordGenerated).toBe(true);
        expect((await store.getUser(chosen.id))?.passwordGenerated).toBe(false);

        // The person chooses a password (the default): the mark is gone, by id, by email and in the list.
        expect(await store.setPassword(generated.id, 'scrypt$chosen', '2030-01-01T00:00:00.000Z')).toBe(true);
        expect(await store.getUser(generated.id)).toEqual({
          ...generated,
          passwordHash: 'scrypt$chosen',
          passwordGenerated: false,
        });
        expect((await store.findUserByEmail(generated.email))?.passwordGenerated).toBe(false);
        expect((await store.listUsers()).find((u) => u.id === generated.id)?.passwordGenerated).toBe(false);

        // A reset to a generated password marks it again; choosing once more clears it.
        expect(await store.setPassword(generated.id, 'scrypt$reset', '2030-01-02T00:00:00.000Z', true)).toBe(true);
        expect(await store.getUser(generated.id)).toMatchObject({
          passwordHash: 'scrypt$reset',
          passwordGenerated: true,
        });
        expect(await store.setPassword(generated.id, 'scrypt$mine', '2030-01-03T00:00:00.000Z', false)).toBe(true);
        expect(await store.getUser(generated.id)).toMatchObject({
          passwordHash: 'scrypt$mine',
          passwordGenerated: false,
        });

        // An account created with a chosen password is marked only by a reset.
        expect(await store.setPassword(chosen.id, 'scrypt$reset', '2030-01-02T00:00:00.000Z', true)).toBe(true);
        expect((await store.findUserByEmail(chosen.email))?.passwordGenerated).toBe(true);
        expect(await store.setPassword(randomUUID(), 'scrypt$x', '2030-01-01T00:00:00.000Z', true)).toBe(false);
      });

      it("revokes every live session of an account but the one kept, and no one else's", async () => {
        const userId = randomUUID();
        const kept = sessionRecord({ userId });
        const others = [sessionRecord({ userId }), sessionRecord({ userId })];
        const stranger = sessionRecord();
        for (const s of [kept, ...others, stranger]) await store.createSession(s);
        await store.revokeSession(others[1]?.id ?? '', '2030-05-01T10:30:00.000Z');
        expect(await store.revokeUserSessions(userId, '2030-05-01T11:00:00.000Z', kept.id)).toBe(1);
        expect((await store.getSession(kept.id))?.revokedAt).toBeNull();
        expect((await store.getSession(others[0]?.id ?? ''))?.revokedAt).toBe('2030-05-01T11:00:00.000Z');
        expect((await store.getSession(others[1]?.id ?? ''))?.revokedAt).toBe('2030-05-01T10:30:00.000Z');
        expect((await store.getSession(stranger.id))?.revokedAt).toBeNull();
      });

      it('stores a session and finds it by id; revokes idempotently keeping the first time', async () => {
        const session = sessionRecord();
        await store.createSession(session);
        expect(await store.getSession(session.id)).toEqual(session);
        await expect(store.createSession(sessionRecord({ id: session.id }))).rejects.toMatchObject({
          code: 'conflict',
        });
        expect(await store.revokeSession(session.id, '2030-05-01T11:00:00.000Z')).toBe(true);
        expect((await store.getSession(session.id))?.revokedAt).toBe('2030-05-01T11:00:00.000Z');
        expect(await store.revokeSession(session.id, '2030-05-01T12:00:00.000Z')).toBe(true);
        expect(await store.getSession(session.id)).toEqual({ ...session, revokedAt: '2030-05-01T11:00:00.000Z' });
        expect(await store.revokeSession(randomUUID(), '2030-05-01T11:00:00.000Z')).toBe(false);
        expect(await store.getSession(randomUUID())).toBeNull();
      });
    });

    describe('audit log', () => {
      it('keeps the actor type of a dashboard account', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entry = auditEntry(workspaceId, {
          action: 'key_create',
          documentId: '',
          actor: { type: 'user', id: randomUUID() },
          version: null,
          before: null,
          after: { version: null, metadata: { key_id: randomUUID(), name: 'ci' } },
        });
        await store.appendAudit(entry);
        expect((await store.listAudit({ workspaceId, limit: 5 })).entries).toEqual([entry]);
      });

      it("keeps a source's sync run as the actor, with the source's name", async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const bySource = auditEntry(workspaceId, {
          action: 'update',
          actor: { type: 'source', id: randomUUID(), name: 'handbook' },
          changeReason: 'sync: changed at source',
        });
        const byKey = auditEntry(workspaceId, { id: uuidv7(), actor: { type: 'api_key', id: 'key-2' } });
        await store.appendAudit(bySource);
        await store.appendAudit(byKey);
        expect((await store.listAudit({ workspaceId, limit: 5 })).entries).toEqual([bySource, byKey]);
      });

      it('returns an appended entry unchanged, and appending the same id twice keeps one entry', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entry = auditEntry(workspaceId, {
          action: 'update',
          version: 2,
          before: { version: 1, metadata: { title: 'Old' } },
          after: { version: 2, metadata: { title: 'New', nested: { n: 1 } } },
          changeReason: 'typo',
        });
        await store.appendAudit(entry);
        await store.appendAudit(entry);
        const listed = await store.listAudit({ workspaceId, limit: 10 });
        expect(listed.total).toBe(1);
        expect(listed.entries).toEqual([entry]);
      });

      it('keeps every entry of appends made at the same time, each listed once', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entries = Array.from({ length: 25 }, (_, i) =>
          auditEntry(workspaceId, { documentId: `doc-${i}`, version: i + 1 }),
        );
        await Promise.all(entries.map((entry) => store.appendAudit(entry)));
        const listed = await store.listAudit({ workspaceId, limit: 50 });
        expect(listed.total).toBe(25);
        expect(new Set(listed.entries.map((e) => e.id))).toEqual(new Set(entries.map((e) => e.id)));
      });

      it('keeps null snapshots and versions', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entry = auditEntry(workspaceId, { action: 'purge', version: null, before: null, after: null });
        await store.appendAudit(entry);
        expect((await store.listAudit({ workspaceId, limit: 5 })).entries).toEqual([entry]);
      });

      it('filters by workspace, document, action and time range, in ascending id order', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const doc = `doc-${randomUUID()}`;
        const t0 = Date.parse('2024-03-01T00:00:00.000Z');
        const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
        const entries: AuditEntry[] = [];
        const actions: AuditAction[] = ['create', 'update', 'update', 'rollback', 'delete', 'create'];
        for (const [i, action] of actions.entries()) {
          entries.push(
            auditEntry(workspaceId, { action, documentId: i < 5 ? doc : `doc-${randomUUID()}`, timestamp: at(i * 10) }),
          );
        }
        // Appended out of order: the listing still sorts by id.
        for (const entry of [...entries].reverse()) await store.appendAudit(entry);
        await store.appendAudit(auditEntry(`ws-${randomUUID()}`, { documentId: doc }));

        const all = await store.listAudit({ workspaceId, limit: 100 });
        expect(all.entries.map((e) => e.id)).toEqual(entries.map((e) => e.id));
        expect(all.total).toBe(6);

        const byDoc = await store.listAudit({ workspaceId, documentId: doc, limit: 100 });
        expect(byDoc.entries.map((e) => e.id)).toEqual(entries.slice(0, 5).map((e) => e.id));
        expect(byDoc.total).toBe(5);

        const updates = await store.listAudit({ workspaceId, action: 'update', limit: 100 });
        expect(updates.entries.map((e) => e.id)).toEqual([entries[1]?.id, entries[2]?.id]);

        const window = await store.listAudit({ workspaceId, since: at(5), until: at(35), limit: 100 });
        expect(window.entries.map((e) => e.id)).toEqual(entries.slice(1, 4).map((e) => e.id));
        expect(window.total).toBe(3);

        const combined = await store.listAudit({ workspaceId, documentId: doc, action: 'create', limit: 100 });
        expect(combined.entries.map((e) => e.id)).toEqual([entries[0]?.id]);

        expect(await store.listAudit({ workspaceId: `ws-${randomUUID()}`, limit: 10 })).toEqual({
          entries: [],
          total: 0,
        });
      });

      it('lists newest first with order desc, paging with beforeId; total ignores paging', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entries = Array.from({ length: 5 }, () => auditEntry(workspaceId));
        for (const entry of entries) await store.appendAudit(entry);
        const newestFirst = [...entries].reverse().map((e) => e.id);
        const all = await store.listAudit({ workspaceId, order: 'desc', limit: 100 });
        expect(all.entries.map((e) => e.id)).toEqual(newestFirst);
        const first = await store.listAudit({ workspaceId, order: 'desc', limit: 2 });
        expect(first.entries.map((e) => e.id)).toEqual(newestFirst.slice(0, 2));
        expect(first.total).toBe(5);
        const next = await store.listAudit({ workspaceId, order: 'desc', beforeId: newestFirst[1], limit: 2 });
        expect(next.entries.map((e) => e.id)).toEqual(newestFirst.slice(2, 4));
        expect(next.total).toBe(5);
      });

      it('pages with afterId and limit; total ignores paging', async () => {
        const workspaceId = `ws-${randomUUID()}`;
        const entries = Array.from({ length: 7 }, () => auditEntry(workspaceId));
        for (const entry of entries) await store.appendAudit(entry);
        const seen: string[] = [];
        let afterId: string | undefined;
        for (let page = 0; page < 10; page++) {
          const result = await store.listAudit(
            afterId === undefined ? { workspaceId, limit: 3 } : { workspaceId, limit: 3, afterId },
          );
          expect(result.total).toBe(7);
          expect(result.entries.length).toBeLessThanOrEqual(3);
          if (result.entries.length === 0) break;
          seen.push(...result.entries.map((e) => e.id));
          afterId = result.entries.at(-1)?.id;
        }
        expect(seen).toEqual(entries.map((e) => e.id));
      });
    });

    describe('usage', () => {
      it('sums counts over instances per key and second, from sinceSecond on', async () => {
        const [k1, k2, k3] = [randomUUID(), randomUUID(), randomUUID()];
        const [i1, i2] = [`api-${randomUUID()}`, `api-${randomUUID()}`];
        const s = 1_700_000_000;
        await store.recordUsage(i1, [
          { keyId: k1, second: s, count: 3 },
          { keyId: k1, second: s + 1, count: 4 },
          { keyId: k2, second: s, count: 1 },
          { keyId: k3, second: s, count: 50 },
        ]);
        await store.recordUsage(i2, [
          { keyId: k1, second: s, count: 2 },
          { keyId: k1, second: s - 5, count: 9 },
        ]);
        const sorted = (rows: { keyId: string; second: number; count: number }[]) =>
          [...rows].sort((a, b) => (a.keyId === b.keyId ? a.second - b.second : a.keyId < b.keyId ? -1 : 1));
        await vi.waitFor(async () => {
          expect(sorted(await store.readUsage([k1, k2], s))).toEqual(
            sorted([
              { keyId: k1, second: s, count: 5 },
              { keyId: k1, second: s + 1, count: 4 },
              { keyId: k2, second: s, count: 1 },
            ]),
          );
        }, EVENTUALLY);
        expect(sorted(await store.readUsage([k1], s - 10))).toEqual([
          { keyId: k1, second: s - 5, count: 9 },
          { keyId: k1, second: s, count: 5 },
          { keyId: k1, second: s + 1, count: 4 },
        ]);
        expect(sorted(await store.readUsage([k1], s, i1))).toEqual([{ keyId: k1, second: s, count: 2 }]);
        expect(await store.readUsage([randomUUID()], 0)).toEqual([]);
        expect(await store.readUsage([], 0)).toEqual([]);
      });

      it('replaces, not adds, when an instance re-sends the same key and second', async () => {
        const key = randomUUID();
        const instance = `api-${randomUUID()}`;
        const s = 1_700_000_100;
        await store.recordUsage(instance, [{ keyId: key, second: s, count: 7 }]);
        await store.recordUsage(instance, [{ keyId: key, second: s, count: 7 }]);
        await store.recordUsage(instance, [{ keyId: key, second: s, count: 9 }]);
        await vi.waitFor(async () => {
          expect(await store.readUsage([key], s)).toEqual([{ keyId: key, second: s, count: 9 }]);
        }, EVENTUALLY);
      });
    });
  });
}
