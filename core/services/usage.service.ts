import type { UsageView } from '../model/response-views.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { RequestContext } from './request-context.ts';

export interface UsageService {
  lastHour(ctx: RequestContext, nowMs?: number): Promise<UsageView>;
}

const MINUTES = 60;

export interface UsageServiceDeps {
  readonly accountStore: AccountStore;
  /**
   * Writes the counts this process's rate limiter holds (it may write them only every few
   * seconds), so a read shows every request this process counted.
   */
  readonly writePending?: () => Promise<void>;
}

/** Requests per minute per key of a workspace over the last hour, from the rate limiter's stored counts. */
export function createUsageService(deps: UsageServiceDeps): UsageService {
  return {
    async lastHour(ctx, nowMs = Date.now()) {
      await deps.writePending?.();
      const currentMinute = Math.floor(nowMs / 60_000);
      const firstMinute = currentMinute - (MINUTES - 1);
      const keys = await deps.accountStore.listKeys(ctx.workspaceId);
      const counts = await deps.accountStore.readUsage(
        keys.map((k) => k.id),
        firstMinute * 60,
      );
      const perKey = new Map(keys.map((k) => [k.id, new Array<number>(MINUTES).fill(0)]));
      for (const c of counts) {
        const slot = Math.floor(c.second / 60) - firstMinute;
        const row = perKey.get(c.keyId);
        if (row && slot >= 0 && slot < MINUTES) row[slot] = (row[slot] ?? 0) + c.count;
      }
      return {
        minutes: Array.from({ length: MINUTES }, (_, i) => new Date((firstMinute + i) * 60_000).toISOString()),
        keys: keys.map((k) => {
          const row = perKey.get(k.id) ?? [];
          return {
            key_id: k.id,
            name: k.name,
            prefix: k.prefix,
            revoked_at: k.revokedAt,
            per_minute: row,
            total: row.reduce((a, b) => a + b, 0),
          };
        }),
      };
    },
  };
}
