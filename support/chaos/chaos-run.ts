/**
 * The chaos scenario of the distributed runtime: an API (`kb serve --stages none`) and `kb worker`
 * processes on an isolated instance of the engines; clients upload small documents, each with a
 * token of its own, and update, re-label or delete some as they complete, retrying whatever is
 * refused or lost (one `Idempotency-Key` per logical write); meanwhile workers are added and killed
 * -9, the API is killed -9 and started again, and engines are stopped and started again. Once the
 * faults are over and the pipeline drained, every acknowledged write is checked against what the
 * service serves. `npm run bench -- --only chaos` and `tests/integration/chaos.distributed.test.ts`
 * run it.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../../core/config/config.ts';
import type { Logger } from '../../core/model/logger.model.ts';
import { createRuntime, type Runtime } from '../../core/runtime/runtime.ts';
import { createKey, REPO_ROOT } from '../child-service.ts';
import { startCohereFake } from '../cohere-fake.ts';
import { freePort } from '../ports.ts';
import { checkDocuments, type DocumentChecks } from './chaos-checks.ts';
import { createLedger, type Ledger, runClient, type WriteCounts } from './chaos-clients.ts';
import {
  type ChunkIndexCheck,
  checkChunkIndex,
  type DeadLetters,
  readDeadLetters,
  stageLag,
} from './chaos-engine-checks.ts';
import {
  type ChaosFault,
  createEngineControl,
  type FaultRecord,
  type Fleet,
  runFaults,
  startFleet,
} from './chaos-faults.ts';
import { createChaosHttp } from './chaos-http.ts';

export { ALL_FAULTS, type ChaosFault, ENGINE_FAULTS, PROCESS_FAULTS } from './chaos-faults.ts';

/** The isolated instance to run against: its configuration and the variables of its child processes. */
export interface ChaosInstance {
  readonly config: Config;
  readonly env: Record<string, string>;
}

export interface ChaosSettings {
  /** Clients writing at once. */
  readonly clients: number;
  /** Documents the clients create in all. */
  readonly documents: number;
  /** The uploads, and the faults, are spread over this long. */
  readonly spreadMs: number;
  readonly faults: readonly ChaosFault[];
  /** Workers at the start (each runs every stage). */
  readonly workers?: number;
  /** With `workers` among the faults: how many times a worker is added and one killed (default 2). */
  readonly workerRounds?: number;
  /** The native engine scripts of the checkout that started the engines (`down`, `up`). */
  readonly nativeDir?: string;
  /** How long the pipeline may take to drain after the last fault and write. */
  readonly drainTimeoutMs?: number;
  readonly progress?: (message: string) => void;
}

/** A fault with how long the pipeline took to resume after it. */
export interface RecoveredFault extends FaultRecord {
  /** From the fault's start to ready again (the engine's `up` done, the API answering). */
  readonly outageMs: number | null;
  /** From ready again to the first version completed after it; null when none completed after. */
  readonly resumeMs: number | null;
}

export interface ChaosResult {
  readonly settings: {
    readonly clients: number;
    readonly documents: number;
    readonly spreadMs: number;
    readonly faults: readonly ChaosFault[];
  };
  readonly writes: WriteCounts;
  readonly writeProblems: readonly string[];
  readonly checks: DocumentChecks;
  readonly chunkIndex: ChunkIndexCheck;
  readonly lag: Record<string, number>;
  readonly deadLetters: DeadLetters;
  readonly faults: readonly RecoveredFault[];
  /** Whether the pipeline drained (no latest version pending or processing, no lag) within the bound. */
  readonly drained: boolean;
  /** From the end of the last fault and write to drained (or to the bound). */
  readonly drainMs: number;
  /** Whether the API answered a repeated create with the same key with the first answer (null: not asked). */
  readonly idempotencyHonoured: boolean | null;
  readonly elapsedMs: number;
  /** The last lines the service's processes printed, for a failure report. */
  readonly output: string;
}

const quiet: Logger = { info() {}, debug() {}, warn() {}, error() {} };
const WORKSPACE = 'chaos';

function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/**
 * Waits until no version is pending (the instance holds this run's only), no latest version is
 * processing and no stage has lag; false at the deadline.
 */
async function drain(runtime: Runtime, deadline: number): Promise<boolean> {
  const { documents } = runtime.ports;
  for (;;) {
    try {
      const [pending, processing, lag] = await Promise.all([
        documents.listPendingVersions(new Date().toISOString(), 1),
        documents.listDocuments({ workspaceId: WORKSPACE, status: 'processing', limit: 0 }),
        stageLag(runtime.ports.logAdmin, runtime.topics),
      ]);
      const behind = Object.values(lag).reduce((a, b) => a + b, 0);
      if (pending.length + processing.total === 0 && behind === 0) return true;
    } catch {
      // an engine still settling: ask again
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Sends the same create twice with one key: does the API answer the second with the first's document? */
async function probeIdempotency(url: string, key: string): Promise<boolean | null> {
  const idempotencyKey = randomUUID();
  const create = async () => {
    const body = new FormData();
    body.append('file', new Blob(['# Probe\n\nIdempotency probe.\n'], { type: 'text/markdown' }), 'probe.md');
    const response = await fetch(`${url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Idempotency-Key': idempotencyKey },
      body,
    });
    return ((await response.json()) as { document_id?: string }).document_id ?? null;
  };
  try {
    const first = await create();
    const second = await create();
    for (const id of new Set([first, second])) {
      if (id)
        await fetch(`${url}/api/v1/documents/${id}?purge=true`, { method: 'DELETE', headers: { 'X-API-Key': key } });
    }
    return first !== null && second !== null ? first === second : null;
  } catch {
    return null;
  }
}

function recovered(faults: readonly FaultRecord[], completions: readonly number[]): RecoveredFault[] {
  const sorted = [...completions].sort((a, b) => a - b);
  return faults.map((fault) => {
    const ready = fault.readyAt;
    const next = ready === null ? undefined : sorted.find((at) => at >= ready);
    return {
      ...fault,
      outageMs: ready === null ? null : ready - fault.startedAt,
      resumeMs: ready === null || next === undefined ? null : next - ready,
    };
  });
}

export async function runChaos(instance: ChaosInstance, settings: ChaosSettings): Promise<ChaosResult> {
  const progress = settings.progress ?? (() => undefined);
  const started = Date.now();
  const fake = await startCohereFake({ dimensions: 384 });
  const env: Record<string, string> = {
    ...instance.env,
    HOST: '127.0.0.1',
    KB_LOG_LEVEL: 'warn',
    // A remote embedding API (a loopback stand-in): the workers load no model, the cores stay with the engines.
    KB_EMBEDDING_PROVIDER: 'cohere',
    KB_COHERE_MODEL: 'embed-english-light-v3.0',
    KB_COHERE_BASE_URL: fake.url,
    KB_COHERE_API_KEY: fake.token,
    // Versions a killed API left pending without their event are queued again within half a minute
    // (instead of a few minutes), so the drain after the last fault stays short.
    KB_STRANDED_CHECK_MS: '5000',
    KB_STRANDED_AFTER_MS: '20000',
    // The Idempotency-Key claim of a request whose API was killed lapses after this (default two
    // minutes), and the client's retry, answered 409 until then, finds what that request wrote.
    KB_REQUEST_TIMEOUT_MS: '30000',
  };
  const engines = createEngineControl(settings.nativeDir ?? path.join(REPO_ROOT, 'deploy', 'native'), progress);
  let fleet: Fleet | null = null;
  let runtime: Runtime | null = null;
  try {
    const key = await createKey(env, {
      workspace: WORKSPACE,
      name: 'chaos',
      permissions: 'read,search,write',
      plan: 'enterprise',
    });
    fleet = await startFleet(env, await freePort(), settings.workers ?? 2);
    const http = createChaosHttp({ url: fleet.url, key: key.key, giveUpMs: 300_000 });
    const ledger: Ledger = createLedger();
    progress(
      `chaos: ${settings.clients} clients, ${settings.documents} documents over ${Math.round(settings.spreadMs / 1000)} s, faults: ${settings.faults.join(', ') || 'none'}`,
    );

    let faultsEnded: number | null = null;
    const steps = { started: 0, total: 0 };
    const writeStart = Date.now();
    const faulting = runFaults({
      faults: settings.faults,
      fleet,
      engines,
      spreadMs: settings.spreadMs,
      minGapMs: 5000,
      ...(settings.workerRounds === undefined ? {} : { workerRounds: settings.workerRounds }),
      progress,
      onStep: (started, total) => Object.assign(steps, { started, total }),
    }).finally(() => {
      faultsEnded = Date.now();
    });
    const followUpsUntil = () =>
      Math.max(writeStart + settings.spreadMs, faultsEnded ?? Number.POSITIVE_INFINITY) + 60_000;
    // The uploads keep pace with the faults: the part of them after the k-th fault's planned
    // place waits until it has started, however long the faults before it took.
    const mayPass = (fraction: number) =>
      faultsEnded !== null || steps.started >= Math.floor(fraction * (steps.total + 1));
    await Promise.all(
      split(settings.documents, settings.clients).map((documents, client) =>
        runClient({ client, http, ledger, documents, spreadMs: settings.spreadMs, followUpsUntil, mayPass }),
      ),
    );
    const writesEnded = Date.now();
    progress(`chaos: clients done (${ledger.writes.acknowledged} writes acknowledged); waiting for the faults to end`);
    const faults = await faulting;
    await engines.restoreAll();
    const drainFrom = Math.max(writesEnded, faultsEnded ?? writesEnded);

    runtime = await createRuntime({ ...instance.config, logLevel: 'silent' }, { stages: 'none', logger: quiet });
    progress('chaos: waiting for the pipeline to drain');
    const drained = await drain(runtime, drainFrom + (settings.drainTimeoutMs ?? 180_000));
    const drainMs = Date.now() - drainFrom;
    progress(`chaos: ${drained ? 'drained' : 'NOT drained'} after ${(drainMs / 1000).toFixed(1)} s; checking`);

    const checks = await checkDocuments({ http, ledger, documents: runtime.ports.documents, workspaceId: WORKSPACE });
    const chunkIndex = await checkChunkIndex(instance.config, WORKSPACE);
    const lag = await stageLag(runtime.ports.logAdmin, runtime.topics);
    const deadLetters = await readDeadLetters(runtime.ports.logAdmin, runtime.ports.logTail, runtime.topics);
    const idempotencyHonoured = await probeIdempotency(fleet.url, key.key);
    return {
      settings: {
        clients: settings.clients,
        documents: settings.documents,
        spreadMs: settings.spreadMs,
        faults: settings.faults,
      },
      writes: ledger.writes,
      writeProblems: ledger.problems,
      checks,
      chunkIndex,
      lag,
      deadLetters,
      faults: recovered(faults, checks.completions),
      drained,
      drainMs,
      idempotencyHonoured,
      elapsedMs: Date.now() - started,
      output: fleet.output(),
    };
  } finally {
    // Every engine this run stopped comes back up, whatever happened.
    await engines.restoreAll().catch((error: unknown) => progress(`chaos: ${String(error)}`));
    await fleet?.stop();
    await runtime?.close().catch(() => undefined);
    await fake.close();
  }
}

/**
 * What the run found against "loses nothing, applies nothing twice", one line each; empty when it
 * found nothing. Without an API that honours `Idempotency-Key`, a write whose answer was lost and
 * that was sent again may be applied twice: up to that many orphans, versions nobody was answered
 * for and extra audit entries are then listed apart, as tolerated.
 */
export function chaosViolations(result: ChaosResult): string[] {
  const out: string[] = [];
  const c = result.checks;
  const flag = (count: number, what: string) => {
    if (count > 0) out.push(`${what}: ${count}`);
  };
  if (!result.drained) out.push(`the pipeline did not drain within the bound (${Math.round(result.drainMs / 1000)} s)`);
  for (const fault of result.faults) {
    if (fault.readyAt === null) out.push(`${fault.action} never became ready: ${fault.error ?? ''}`.slice(0, 300));
  }
  flag(result.writes.gaveUp, 'writes given up (no answer but errors for 5 minutes)');
  flag(result.writes.refused, 'writes refused with a 4xx');
  flag(c.missing, 'acknowledged documents missing');
  flag(c.notCompleted, 'documents not completed at their last acknowledged version');
  flag(c.wrongVersion, 'documents at another version than the last acknowledged one');
  flag(c.chunkProblems, 'documents whose chunks are duplicated, missing or miscounted');
  flag(c.searchMisses, 'documents a keyword search for their token did not find exactly once at their version');
  flag(c.staleHits, 'replaced content still found');
  flag(c.deletedVisible, 'deleted documents still visible');
  flag(c.unfinishedVersions, 'versions left pending or processing');
  flag(c.auditMissing, 'acknowledged writes without an audit entry');
  const given = Object.entries(c.failedVersions).filter(([code]) => code !== 'superseded');
  flag(
    given.reduce((s, [, n]) => s + n, 0),
    `failed versions (${given.map(([k, n]) => `${k} ${n}`).join(', ')})`,
  );
  flag(result.chunkIndex.duplicates, 'chunk copies in OpenSearch beyond one per (document, version, index)');
  flag(result.chunkIndex.oddIds, 'chunks in OpenSearch with an unexpected id');
  flag(
    Object.values(result.lag).reduce((a, b) => a + b, 0),
    'messages the stages never committed (lag)',
  );
  flag(result.deadLetters.total, `dead letters (${JSON.stringify(result.deadLetters.byCode)})`);
  const tolerated = result.idempotencyHonoured === false ? result.writes.ambiguous : 0;
  const twice = c.orphans + c.unacknowledgedVersions;
  if (twice > tolerated) {
    out.push(
      `writes applied without an acknowledgement (orphan documents ${c.orphans}, unacknowledged versions ${c.unacknowledgedVersions}), beyond the ${tolerated} whose answer was lost`,
    );
  }
  if (c.auditExtra > tolerated) out.push(`audit entries beyond one per acknowledged write: ${c.auditExtra}`);
  return out;
}
