import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import { type ApiKeyRecord, PERMISSIONS, type Permission, PLANS, type Plan } from '../model/account-records.model.ts';
import type { ApiKeyView } from '../model/response-views.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import { checkDisplayText } from '../util/display-text.ts';
import { isoNow } from '../util/time.ts';
import type { AccountActor, KeysService } from './services.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^ink_[0-9A-Za-z]{32,}$/;
const WORKSPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** `ink_` followed by 40 base62 characters (≈ 238 bits), from a CSPRNG without modulo bias. */
export function generateApiKey(): string {
  let out = 'ink_';
  while (out.length < 44) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < 44) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function apiKeyView(record: ApiKeyRecord): ApiKeyView {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    workspace_id: record.workspaceId,
    permissions: [...record.permissions],
    plan: record.plan,
    created_at: record.createdAt,
    revoked_at: record.revokedAt,
    last_used_at: record.lastUsedAt,
  };
}

export interface KeysServiceDeps {
  readonly accountStore: AccountStore;
  /** How long a looked-up key is trusted before it is read again (bounds revocation latency). */
  readonly cacheMs: number;
  /** How often last-use times are written back (default 5 s); a listing of keys writes them first. */
  readonly touchIntervalMs?: number;
}

/** A looked-up key: the record (null: unknown), when its read started, and whether it was used since the last sweep. */
interface CachedKey {
  readonly record: ApiKeyRecord | null;
  readonly at: number;
  used: boolean;
}

/**
 * Keys are trusted for at most `cacheMs` after the read that returned them started (the
 * revocation bound). Reads are batched: every `cacheMs / 2` one query re-reads all the keys used
 * since the previous sweep, so a busy key never waits for the store, and keys nobody has read yet
 * (or whose record expired) are read together, one query per event-loop turn, however many
 * requests present them.
 */
export function createKeysService(deps: KeysServiceDeps): KeysService & { close(): Promise<void> } {
  /** A `key_create`/`key_revoke` audit entry: no document; the key's public fields in `after.metadata`. */
  const audit = (action: 'key_create' | 'key_revoke', key: ApiKeyRecord, by: AccountActor) =>
    deps.accountStore.appendAudit({
      id: uuidv7(),
      action,
      workspaceId: key.workspaceId,
      documentId: '',
      actor: { type: 'user', id: by.accountId },
      timestamp: isoNow(),
      version: null,
      before: null,
      after: {
        version: null,
        metadata: {
          key_id: key.id,
          name: key.name,
          prefix: key.prefix,
          permissions: [...key.permissions],
          plan: key.plan,
        },
      },
      changeReason: null,
      traceId: by.traceId,
    });

  const cache = new Map<string, CachedKey>();
  /** Keys looked up by id (scoped tokens' parents), trusted for `cacheMs` like `cache`. */
  const byId = new Map<string, { readonly record: ApiKeyRecord | null; readonly at: number }>();

  /** Reads `hashes` in one query and caches what it found (an older read never replaces a newer one). */
  const readBatch = async (hashes: readonly string[]): Promise<Map<string, ApiKeyRecord>> => {
    const startedAt = Date.now();
    const found = await deps.accountStore.findKeysByHash(hashes);
    if (cache.size > 10_000) cache.clear();
    for (const hash of hashes) {
      const current = cache.get(hash);
      if (current !== undefined && current.at > startedAt) continue;
      cache.set(hash, { record: found.get(hash) ?? null, at: startedAt, used: current?.used ?? false });
    }
    return found;
  };

  /** Hashes wanted now, answered by one read at the end of this event-loop turn. */
  let wanted: { readonly hashes: Set<string>; readonly read: Promise<Map<string, ApiKeyRecord>> } | null = null;
  const lookUp = async (hash: string): Promise<ApiKeyRecord | null> => {
    if (wanted === null) {
      const hashes = new Set<string>();
      const read = new Promise<Map<string, ApiKeyRecord>>((resolve, reject) =>
        setImmediate(() => {
          wanted = null;
          readBatch([...hashes]).then(resolve, reject);
        }),
      );
      wanted = { hashes, read };
    }
    const batch = wanted;
    batch.hashes.add(hash);
    return (await batch.read).get(hash) ?? null;
  };

  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    const due: string[] = [];
    for (const [hash, entry] of cache) {
      if (!entry.used) continue;
      entry.used = false;
      due.push(hash);
    }
    if (due.length === 0) return;
    sweeping = true;
    try {
      await readBatch(due);
    } catch {
      // The records stay until they expire; a request after that reads its key itself.
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(() => void sweep(), Math.max(50, deps.cacheMs / 2));
  sweeper.unref();

  const pendingTouches = new Map<string, string>();
  let touching: Promise<void> = Promise.resolve();
  /**
   * Writes the last uses not yet written, in one call; resolves once they and every earlier flush
   * are written (a failed write keeps them for the next flush). Nothing pending: no write.
   */
  const flush = (): Promise<void> => {
    touching = touching.then(async () => {
      if (pendingTouches.size === 0) return;
      const batch = new Map(pendingTouches);
      pendingTouches.clear();
      await deps.accountStore.touchKeys(batch).catch(() => {
        for (const [id, at] of batch) if (!pendingTouches.has(id)) pendingTouches.set(id, at);
      });
    });
    return touching;
  };
  const timer = setInterval(() => void flush(), deps.touchIntervalMs ?? 5000);
  timer.unref();

  return {
    async create({ workspaceId, name, permissions, plan }, by) {
      if (!WORKSPACE_PATTERN.test(workspaceId)) {
        throw new KbError(
          'validation-error',
          'The workspace id must be 1–64 characters of letters, digits, `_` or `-`.',
        );
      }
      if (!name.trim() || name.length > 200)
        throw new KbError('validation-error', 'The key name must be 1–200 characters.');
      checkDisplayText('name', name.trim());
      const unknown = permissions.filter((p) => !PERMISSIONS.includes(p as Permission));
      if (permissions.length === 0 || unknown.length > 0) {
        throw new KbError('validation-error', `Permissions must be a non-empty subset of ${PERMISSIONS.join(', ')}.`);
      }
      if (!PLANS.includes(plan as Plan))
        throw new KbError('validation-error', `The plan must be one of ${PLANS.join(', ')}.`);
      const key = generateApiKey();
      const record: ApiKeyRecord = {
        id: randomUUID(),
        name: name.trim(),
        prefix: key.slice(0, 12),
        hash: hashApiKey(key),
        workspaceId,
        permissions: [...new Set(permissions)].sort() as Permission[],
        plan,
        createdAt: isoNow(),
        revokedAt: null,
        lastUsedAt: null,
      };
      await deps.accountStore.createKey(record);
      if (by) await audit('key_create', record, by);
      return { key, record: apiKeyView(record) };
    },

    async list(workspaceId) {
      // Last uses wait up to the touch interval to be written: a listing writes them first.
      await flush();
      return (await deps.accountStore.listKeys(workspaceId)).map(apiKeyView);
    },

    count() {
      return deps.accountStore.countKeys();
    },

    async revoke(id, by) {
      const before = by ? await deps.accountStore.getKey(id) : null;
      const revoked = await deps.accountStore.revokeKey(id, isoNow());
      cache.clear();
      byId.clear();
      if (by && revoked && before && before.revokedAt === null) await audit('key_revoke', before, by);
      return revoked;
    },

    async authenticate(presented) {
      if (!KEY_PATTERN.test(presented)) return null;
      const hash = hashApiKey(presented);
      const now = Date.now();
      const cached = cache.get(hash);
      let record: ApiKeyRecord | null;
      if (cached && now - cached.at < deps.cacheMs) {
        record = cached.record;
        cached.used = true;
      } else {
        record = await lookUp(hash);
        const entry = cache.get(hash);
        if (entry) entry.used = true;
      }
      if (!record || record.revokedAt !== null) return null;
      pendingTouches.set(record.id, new Date(now).toISOString());
      return record;
    },

    async activeKey(id) {
      const now = Date.now();
      let entry = byId.get(id);
      if (!entry || now - entry.at >= deps.cacheMs) {
        entry = { record: await deps.accountStore.getKey(id), at: now };
        if (byId.size > 10_000) byId.clear();
        byId.set(id, entry);
      }
      const record = entry.record;
      if (!record || record.revokedAt !== null) return null;
      pendingTouches.set(record.id, new Date(now).toISOString());
      return record;
    },

    async close() {
      clearInterval(timer);
      clearInterval(sweeper);
      await flush();
    },
  };
}
