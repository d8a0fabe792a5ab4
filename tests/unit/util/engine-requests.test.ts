import { describe, expect, it } from 'vitest';
import {
  countEngineRequest,
  countedApart,
  engineRequestCounts,
  engineRequestGrowth,
  engineRequestsCountedApart,
} from '../../../core/util/engine-requests.ts';

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

  it('count the requests of an observer apart, also after it awaits, and leave the rest where they were', async () => {
    const before = engineRequestCounts();
    const apartBefore = engineRequestsCountedApart();
    const observing = countedApart(async () => {
      countEngineRequest('opensearch', '_count');
      await new Promise((resolve) => setTimeout(resolve, 5));
      countEngineRequest('opensearch', '_count');
    });
    // Work running beside the observer is counted as usual.
    countEngineRequest('opensearch', '_mget');
    await observing;
    expect(engineRequestGrowth(before, engineRequestCounts())).toEqual([
      { engine: 'opensearch', operation: '_mget', count: 1 },
    ]);
    expect(engineRequestGrowth(apartBefore, engineRequestsCountedApart())).toEqual([
      { engine: 'opensearch', operation: '_count', count: 2 },
    ]);
  });
});
