import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngineControl } from '../../support/chaos/chaos-faults.ts';
import { formatChaosResult } from '../../support/chaos/chaos-report.ts';
import {
  type ChaosFault,
  type ChaosResult,
  chaosViolations,
  ENGINE_FAULTS,
  PROCESS_FAULTS,
  runChaos,
} from '../../support/chaos/chaos-run.ts';
import { REPO_ROOT } from '../../support/child-service.ts';
import { distributedEnv } from '../support/distributed-env.ts';

/**
 * The chaos scenario of `npm run bench -- --only chaos`, shorter: clients upload, update and
 * delete documents, retrying with an `Idempotency-Key`, while workers are added and killed -9 and
 * the API is killed -9 and started again; afterwards every acknowledged write is served at its
 * version, once, and nothing else was applied (a write applied by an API killed before it stored
 * its answer is found by the retry, not applied again). With KB_CHAOS_ENGINES=1, a second run also
 * stops and starts Kafka, OpenSearch, MinIO and ClickHouse (with the native scripts of
 * KB_CHAOS_NATIVE_DIR, by default this checkout's deploy/native), and brings every engine back up
 * whatever happens: that one takes several minutes and stops the engines other suites use, so it
 * runs only when asked for (and in the bench).
 */
const withEngines = process.env.KB_CHAOS_ENGINES === '1';
const nativeDir = process.env.KB_CHAOS_NATIVE_DIR || undefined;

async function chaos(
  faults: readonly ChaosFault[],
  documents: number,
  spreadMs: number,
  workerRounds: number,
): Promise<ChaosResult> {
  const setup = distributedEnv();
  const started = Date.now();
  try {
    const result = await runChaos(setup, {
      clients: 3,
      documents,
      spreadMs,
      faults,
      workerRounds,
      drainTimeoutMs: 90_000,
      ...(nativeDir ? { nativeDir } : {}),
      progress: (message) => console.log(`[${Math.round((Date.now() - started) / 1000)} s] ${message}`),
    });
    console.log(formatChaosResult(result));
    return result;
  } finally {
    await setup.cleanup();
  }
}

function expectNothingLost(result: ChaosResult, faults: readonly ChaosFault[]): void {
  const report = formatChaosResult(result);
  const violations = chaosViolations(result);
  expect(violations, `${report}\n\n${violations.length > 0 ? result.output : ''}`).toEqual([]);
  // The faults did happen, with traffic around them.
  for (const fault of faults) expect(result.faults.some((f) => f.fault === fault && f.readyAt !== null)).toBe(true);
  expect(result.checks.documents).toBe(result.settings.documents);
  expect(result.checks.deleted).toBeGreaterThan(0);
  expect(result.writes.acknowledged).toBeGreaterThan(result.settings.documents);
}

describe('the distributed runtime under faults', () => {
  // Whatever became of the runs (a timeout included), the files after this one find every engine up.
  afterAll(async () => {
    if (!withEngines) return;
    const dir = nativeDir ?? path.join(REPO_ROOT, 'deploy', 'native');
    await createEngineControl(dir, (message) => console.log(message), ENGINE_FAULTS).restoreAll();
  }, 600_000);

  it('loses nothing and applies nothing twice while workers are added and killed -9 and the API is killed -9', async () => {
    // Short, for the suite: a worker added and one killed, and the API killed.
    const result = await chaos(PROCESS_FAULTS, 40, 30_000, 1);
    expectNothingLost(result, PROCESS_FAULTS);
  }, 900_000);

  it.runIf(withEngines)(
    'loses nothing and applies nothing twice while Kafka, OpenSearch, MinIO and ClickHouse restart',
    async () => {
      const faults = [...PROCESS_FAULTS, ...ENGINE_FAULTS];
      const result = await chaos(faults, 60, 60_000, 2);
      expectNothingLost(result, faults);
    },
    1_200_000,
  );
});
