/** The chaos scenario's result as text: the counts, each fault's recovery, the drain, and what failed. */
import { type ChaosResult, chaosViolations } from './chaos-run.ts';

const seconds = (ms: number | null) => (ms === null ? '–' : `${(ms / 1000).toFixed(1)} s`);

export function formatChaosResult(result: ChaosResult): string {
  const { writes: w, checks: c, settings: s } = result;
  const violations = chaosViolations(result);
  const lines = [
    `chaos: ${s.clients} clients, ${s.documents} documents over ${Math.round(s.spreadMs / 1000)} s, faults: ${s.faults.join(', ') || 'none'} (${seconds(result.elapsedMs)} in all)`,
    `writes: ${w.acknowledged} acknowledged, ${w.retried} retried, ${w.unanswered} attempts unanswered (${w.ambiguous} writes), ` +
      `${w.failedAnswers} attempts answered 5xx, ${w.refused} refused, ${w.gaveUp} given up; ` +
      `the API ${result.idempotencyHonoured === null ? 'was not asked about' : result.idempotencyHonoured ? 'honours' : 'ignores'} Idempotency-Key`,
    `documents: ${c.documents} acknowledged (${c.deleted} deleted), ${c.affected.size} with a problem: missing ${c.missing}, not completed ${c.notCompleted}, ` +
      `wrong version ${c.wrongVersion}, chunk problems ${c.chunkProblems}, search misses ${c.searchMisses}, ` +
      `replaced content found ${c.staleHits}, deleted but visible ${c.deletedVisible}`,
    `versions: unfinished ${c.unfinishedVersions}, unacknowledged ${c.unacknowledgedVersions}, failed ${JSON.stringify(c.failedVersions)}; ` +
      `orphan documents ${c.orphans}; audit entries missing ${c.auditMissing}, extra ${c.auditExtra}`,
    `OpenSearch: ${result.chunkIndex.chunks} chunks, ${result.chunkIndex.duplicates} duplicated, ${result.chunkIndex.oddIds} odd ids; ` +
      `lag ${JSON.stringify(result.lag)}; dead letters ${result.deadLetters.total} ${JSON.stringify(result.deadLetters.byStage)} ${JSON.stringify(result.deadLetters.byCode)}`,
    `drain: ${result.drained ? '' : 'NOT drained, gave up '}${seconds(result.drainMs)} after the last fault and write`,
    'faults (outage: start to ready again; resume: ready to the next completion):',
    ...result.faults.map(
      (f) =>
        `  ${f.action.padEnd(36)} outage ${seconds(f.outageMs).padStart(7)}  resume ${seconds(f.resumeMs).padStart(7)}${f.error ? `  FAILED: ${f.error.slice(0, 200)}` : ''}`,
    ),
    violations.length === 0
      ? 'verdict: nothing lost, nothing applied twice'
      : `verdict: ${violations.length} problem(s):`,
    ...violations.map((v) => `  - ${v}`),
  ];
  if (c.samples.length > 0) lines.push('first problems found:', ...c.samples.slice(0, 25).map((l) => `  ${l}`));
  if (result.deadLetters.samples.length > 0)
    lines.push('dead letters:', ...result.deadLetters.samples.map((l) => `  ${l}`));
  if (result.writeProblems.length > 0) lines.push('writes:', ...result.writeProblems.slice(0, 10).map((l) => `  ${l}`));
  return lines.join('\n');
}
