import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import {
  type ApiKeyRecord,
  type ControlStore,
  PERMISSIONS,
  type Permission,
  PLANS,
  type Plan,
} from '../ports/control-store/control-store.port.ts';
import { isoNow } from '../util/time.ts';
import type { AccountActor, KeysService } from './services.ts';
import type { ApiKeyView } from './views.ts';

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
  readonly control: ControlStore;
  /** How long a looked-up key is trusted before it is read again (bounds revocation latency). */
  readonly cacheMs: number;
  /** How often last-use times are written back. */
  readonly touchIntervalMs?: number;
}

/** A looked-up key: the record (null: unknown), when it was read, and a lookup in flight, if any. */
interface CachedKey {
  record: ApiKeyRecord | null;
  at: number;
  refreshing: Promise<ApiKeyRecord | null> | null;
}

/**
 * Keys are read from the control store at most once per `cacheMs` each, and never trusted for
 * longer (the revocation bound). A key used in the second half of that window is read again in
 * the background while its cached record keeps answering, so a busy key never waits for the
 * store; concurrent requests for a key nobody has looked up yet share one lookup.
 */
export function createKeysService(deps: KeysServiceDeps): KeysService & { close(): Promise<void> } {
  /** A `key_create`/`key_revoke` audit entry: no document; the key's public fields in `after.metadata`. */
  const audit = (action: 'key_create' | 'key_revoke', key: ApiKeyRecord, by: AccountActor) =>
    deps.control.appendAudit({
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
  /** Lookups in flight for keys with no usable cache entry, shared by concurrent requests. */
  const lookups = new Map<string, Promise<ApiKeyRecord | null>>();
  const lookUp = (hash: string): Promise<ApiKeyRecord | null> => {
    const startedAt = Date.now();
    return deps.control.findKeyByHash(hash).then((record) => {
      if (cache.size > 10_000) cache.clear();
      const current = cache.get(hash);
      // A revocation in this process (`revoke` clears the cache) after the read started wins.
      if (current === undefined || current.at <= startedAt)
        cache.set(hash, { record, at: startedAt, refreshing: null });
      return record;
    });
  };
  const awaitLookup = (hash: string): Promise<ApiKeyRecord | null> => {
    let pending = lookups.get(hash);
    if (pending === undefined) {
      pending = lookUp(hash).finally(() => lookups.delete(hash));
      lookups.set(hash, pending);
    }
    return pending;
  };
  const pendingTouches = new Map<string, string>();
  const flush = async () => {
    if (pendingTouches.size === 0) return;
    const batch = new Map(pendingTouches);
    pendingTouches.clear();
    await deps.control.touchKeys(batch).catch(() => {
      for (const [id, at] of batch) if (!pendingTouches.has(id)) pendingTouches.set(id, at);
    });
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
      await deps.control.createKey(record);
      if (by) await audit('key_create', record, by);
      return { key, record: apiKeyView(record) };
    },

    async list(workspaceId) {
      return (await deps.control.listKeys(workspaceId)).map(apiKeyView);
    },

    async revoke(id, by) {
      const before = by ? await deps.control.getKey(id) : null;
      const revoked = await deps.control.revokeKey(id, isoNow());
      cache.clear();
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
        if (cached.refreshing === null && now - cached.at >= deps.cacheMs / 2) {
          const entry = cached;
          entry.refreshing = lookUp(hash).catch(() => {
            // The record stays until it expires; the next use after that waits for the store.
            entry.refreshing = null;
            return null;
          });
        }
      } else {
        record = await awaitLookup(hash);
      }
      if (!record || record.revokedAt !== null) return null;
      pendingTouches.set(record.id, new Date(now).toISOString());
      return record;
    },

    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
