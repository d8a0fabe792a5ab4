import { describe, expect, it } from 'vitest';
import { createSharedRefresh } from '../../../core/ports/document-store/opensearch/opensearch-refresh.ts';

/** A refresh that finishes when the test says so, recording when each one started. */
function controlledRefresh() {
  const started: Array<{ indexes: string; finish(): void; fail(error: Error): void }> = [];
  const refresh = (indexes: string) =>
    new Promise<void>((resolve, reject) => {
      started.push({ indexes, finish: resolve, fail: reject });
    });
  return { started, refresh };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('shared OpenSearch refresh', () => {
  it('runs a refresh at once when none runs, and one more for every caller that asked meanwhile', async () => {
    const { started, refresh } = controlledRefresh();
    const shared = createSharedRefresh(refresh);
    const first = shared('chunks');
    await turn();
    expect(started).toHaveLength(1);

    // Three callers whose writes finished while the first refresh ran: it may not show them.
    const waiting = [shared('chunks'), shared('chunks'), shared('chunks')];
    let settled = 0;
    for (const w of waiting) void w.then(() => settled++);
    await turn();
    expect(started).toHaveLength(1);

    started[0]?.finish();
    await first;
    await turn();
    expect(settled).toBe(0);
    expect(started).toHaveLength(2);
    started[1]?.finish();
    await Promise.all(waiting);
    expect(started).toHaveLength(2);
  });

  it('keeps different index sets apart', async () => {
    const { started, refresh } = controlledRefresh();
    const shared = createSharedRefresh(refresh);
    const a = shared('versions,documents');
    const b = shared('chunks');
    await turn();
    expect(started.map((s) => s.indexes)).toEqual(['versions,documents', 'chunks']);
    for (const s of started) s.finish();
    await Promise.all([a, b]);
  });

  it('rejects the callers of a failed refresh, and the next caller gets a new one', async () => {
    const { started, refresh } = controlledRefresh();
    const shared = createSharedRefresh(refresh);
    const first = shared('chunks');
    const queued = shared('chunks');
    await turn();
    started[0]?.fail(new Error('engine went away'));
    await expect(first).rejects.toThrow('engine went away');
    await turn();
    // The queued caller still gets a refresh of its own after the failed one.
    expect(started).toHaveLength(2);
    started[1]?.finish();
    await queued;
    const later = shared('chunks');
    await turn();
    expect(started).toHaveLength(3);
    started[2]?.finish();
    await later;
  });
});
