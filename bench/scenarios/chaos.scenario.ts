/**
 * Chaos (distributed runtime): clients upload, update and delete documents through a `kb serve
 * --stages none` child while `kb worker` children are added and killed -9, the API is killed -9 and
 * started again, and Kafka, OpenSearch, MinIO and ClickHouse are each stopped and started again
 * (`support/chaos/`). Afterwards every acknowledged write is checked; the row gives the counts
 * (all but the writes and documents should be 0), each fault's outage and how long the pipeline
 * took to resume after it, and the drain time.
 */
import { formatChaosResult } from '../../support/chaos/chaos-report.ts';
import { type ChaosFault, chaosViolations, runChaos } from '../../support/chaos/chaos-run.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import type { Target } from '../lib/target.ts';

export interface ChaosBenchOptions {
  readonly clients: number;
  readonly documents: number;
  readonly seconds: number;
  readonly faults: readonly ChaosFault[];
  /** The engine scripts of the checkout that started the engines; default this checkout's deploy/native. */
  readonly nativeDir?: string;
}

export async function chaosScenario(ctx: BenchContext, target: Target, options: ChaosBenchOptions): Promise<Row> {
  const row = createRow(
    'chaos',
    target.runtime,
    `${options.documents} docs, ${options.clients} clients, ${options.seconds} s`,
  );
  const instance = await target.fresh();
  try {
    const result = await runChaos(instance, {
      clients: options.clients,
      documents: options.documents,
      spreadMs: options.seconds * 1000,
      faults: options.faults,
      ...(options.nativeDir ? { nativeDir: options.nativeDir } : {}),
      progress: ctx.progress,
    });
    ctx.progress(formatChaosResult(result));
    const c = result.checks;
    addFigure(row, 'writes acknowledged', 'writes', [result.writes.acknowledged]);
    addFigure(row, 'writes retried', 'writes', [result.writes.retried]);
    addFigure(row, 'documents acknowledged', 'docs', [c.documents]);
    const lost = addFigure(row, 'documents lost, stranded or not served as last written', 'docs', [c.affected.size]);
    judge(lost, { atMost: 0 });
    addFigure(row, 'versions left pending or processing', 'versions', [c.unfinishedVersions]);
    addFigure(row, 'chunks duplicated or miscounted (API, OpenSearch)', 'docs', [
      c.chunkProblems + result.chunkIndex.duplicates + result.chunkIndex.oddIds,
    ]);
    addFigure(row, 'deleted or replaced content still found', 'docs', [c.deletedVisible + c.staleHits]);
    addFigure(row, 'orphan documents', 'docs', [c.orphans]);
    addFigure(row, 'versions nobody was answered for', 'versions', [c.unacknowledgedVersions]);
    addFigure(row, 'audit entries missing', 'entries', [c.auditMissing]);
    addFigure(row, 'audit entries beyond one per write', 'entries', [c.auditExtra]);
    addFigure(row, 'consumer lag after the drain', 'messages', [Object.values(result.lag).reduce((a, b) => a + b, 0)]);
    addFigure(row, 'dead letters', 'events', [result.deadLetters.total]);
    const byAction = new Map<string, { outage: number[]; resume: number[] }>();
    for (const fault of result.faults) {
      const entry = byAction.get(fault.action) ?? { outage: [], resume: [] };
      if (fault.outageMs !== null) entry.outage.push(fault.outageMs / 1000);
      if (fault.resumeMs !== null) entry.resume.push(fault.resumeMs / 1000);
      byAction.set(fault.action, entry);
    }
    for (const [action, { outage, resume }] of byAction) {
      addFigure(row, `${action}: until ready`, 's', outage);
      addFigure(row, `${action}: ready to next completion`, 's', resume);
    }
    const drain = addFigure(row, 'drain after the last fault and write', 's', [result.drainMs / 1000]);
    if (!result.drained) row.notes.push(`the pipeline did not drain within the bound`);
    judge(drain, { atMost: 60 });
    const violations = chaosViolations(result);
    row.notes.push(
      `${options.clients} clients retried every refused or lost write with an Idempotency-Key (the API ${
        result.idempotencyHonoured ? 'honours' : 'ignores'
      } it); faults: ${options.faults.join(', ')}; a remote embedding API stand-in; ` +
        (violations.length === 0 ? 'nothing lost, nothing applied twice' : `found: ${violations.join('; ')}`),
    );
    return row;
  } finally {
    await instance.cleanup();
  }
}
