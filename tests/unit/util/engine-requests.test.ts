import { describe, expect, it } from 'vitest';
import {
  countEngineRequest,
  countedApart,
  countedUnder,
  engineRequestCounts,
  engineRequestCountsByLabel,
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

  it('count the requests of a labelled scope under its label too, also after it awaits', async () => {
    const before = engineRequestCounts();
    const labelled = () => engineRequestCountsByLabel().filter((c) => c.label.startsWith('test-stage'));
    const labelledBefore = labelled();
    await Promise.all([
      countedUnder('test-stage-a', async () => {
        countEngineRequest('opensearch', '_mget');
        await new Promise((resolve) => setTimeout(resolve, 5));
        countEngineRequest('opensearch', '_bulk');
      }),
      countedUnder('test-stage-b', async () => countEngineRequest('opensearch', '_mget', 2)),
    ]);
    countEngineRequest('opensearch', '_mget');
    expect(
      engineRequestGrowth(before, engineRequestCounts()).sort((a, b) => a.operation.localeCompare(b.operation)),
    ).toEqual([
      { engine: 'opensearch', operation: '_bulk', count: 1 },
      { engine: 'opensearch', operation: '_mget', count: 4 },
    ]);
    expect(labelledBefore).toEqual([]);
    expect(labelled().sort((a, b) => `${a.label}${a.operation}`.localeCompare(`${b.label}${b.operation}`))).toEqual([
      { label: 'test-stage-a', engine: 'opensearch', operation: '_bulk', count: 1 },
      { label: 'test-stage-a', engine: 'opensearch', operation: '_mget', count: 1 },
      { label: 'test-stage-b', engine: 'opensearch', operation: '_mget', count: 2 },
    ]);
  });
});
