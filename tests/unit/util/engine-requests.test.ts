import { describe, expect, it } from 'vitest';
import { countEngineRequest, engineRequestCounts, engineRequestGrowth } from '../../../core/util/engine-requests.ts';

describe('engine request counters', () => {
  it('count by engine and operation, and give the growth between two reads', () => {
    const before = engineRequestCounts();
    countEngineRequest('opensearch', '_bulk');
    countEngineRequest('opensearch', '_bulk');
    countEngineRequest('opensearch', '_mget');
    countEngineRequest('clickhouse', 'insert', 3);
    const growth = engineRequestGrowth(before, engineRequestCounts());
    expect(growth.sort((a, b) => `${a.engine}${a.operation}`.localeCompare(`${b.engine}${b.operation}`))).toEqual([
      { engine: 'clickhouse', operation: 'insert', count: 3 },
      { engine: 'opensearch', operation: '_bulk', count: 2 },
      { engine: 'opensearch', operation: '_mget', count: 1 },
    ]);
    expect(engineRequestGrowth(engineRequestCounts(), engineRequestCounts())).toEqual([]);
  });
});
