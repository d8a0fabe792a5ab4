import type { UsageCount } from '../../model/account-records.model.ts';
import type { AccountStore } from './account-store.port.ts';
import type { ClickHouseContext } from './clickhouse-context.ts';

/** The rate-limit usage counters of the ClickHouse account store (see `createClickHouseAccountStore`). */
export function createClickHouseUsage({
  select,
  insert,
}: ClickHouseContext): Pick<AccountStore, 'recordUsage' | 'readUsage'> {
  return {
    async recordUsage(instanceId, counts: readonly UsageCount[]) {
      await insert(
        'recording usage',
        'rate_usage',
        counts.map((c) => ({ instance: instanceId, key_id: c.keyId, second: c.second, count: c.count })),
      );
    },

    async readUsage(keyIds, sinceSecond, excludeInstance) {
      if (keyIds.length === 0) return [];
      const exclude = excludeInstance === undefined ? '' : 'AND instance != {exclude:String}';
      const rows = await select<{ key_id: string; second: number; count: number }>(
        'reading usage',
        `SELECT key_id, second, toUInt32(sum(count)) AS count FROM rate_usage FINAL
         WHERE key_id IN {keyIds:Array(String)} AND second >= {since:Int64} ${exclude}
         GROUP BY key_id, second ORDER BY key_id, second`,
        {
          keyIds: [...keyIds],
          since: Math.floor(sinceSecond),
          ...(excludeInstance === undefined ? {} : { exclude: excludeInstance }),
        },
      );
      return rows.map((row) => ({ keyId: row.key_id, second: Number(row.second), count: Number(row.count) }));
    },
  };
}
