/**
 * The faults of the chaos scenario: `kb worker` processes added and killed -9, the API killed -9
 * and started again on the same port, and engines stopped and started again with the native
 * scripts (`down --keep-data <engine>`, then `up <engine>`), one after another on a schedule.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ChildService, startChild, stopChild } from '../child-service.ts';

const run = promisify(execFile);

export const PROCESS_FAULTS = ['workers', 'api'] as const;
export const ENGINE_FAULTS = ['kafka', 'opensearch', 'minio', 'clickhouse'] as const;
export type Engine = (typeof ENGINE_FAULTS)[number];
export type ChaosFault = (typeof PROCESS_FAULTS)[number] | Engine;
export const ALL_FAULTS: readonly ChaosFault[] = [...PROCESS_FAULTS, ...ENGINE_FAULTS];

/** One fault as it happened. */
export interface FaultRecord {
  readonly fault: ChaosFault;
  /** What was done, e.g. `kill -9 a worker` or `restart kafka`. */
  readonly action: string;
  /** When it began (epoch ms). */
  readonly startedAt: number;
  /**
   * When what was disturbed could work again (epoch ms): the engine ready (its `up` done), the API
   * answering, the new worker in its groups; for a killed worker, the kill itself. Null when it
   * never became ready.
   */
  readonly readyAt: number | null;
  /** Why it did not become ready, when it did not. */
  readonly error?: string;
}

/** The service's processes: one API on a fixed port and any number of workers. */
export interface Fleet {
  readonly url: string;
  /** Workers alive now. */
  readonly workers: ChildService[];
  addWorker(): Promise<ChildService>;
  /** Kills a worker with SIGKILL (starting one first when it is the last). */
  killWorker(): Promise<void>;
  /** Kills the API with SIGKILL and starts it again on the same port. */
  restartApi(): Promise<void>;
  /** The last lines every process printed (dead ones included), for a failure report. */
  output(): string;
  stop(): Promise<void>;
}

function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

async function waitForWorker(worker: ChildService, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!worker.output().includes('kb worker running')) {
    if (worker.process.exitCode !== null) throw new Error(`kb worker exited early:\n${tail(worker.output())}`);
    if (Date.now() > deadline)
      throw new Error(`kb worker did not start within ${timeoutMs} ms:\n${tail(worker.output())}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the API (`kb serve --stages none`) on `port` and `workers` workers of every stage, all at once. */
export async function startFleet(env: Record<string, string>, port: number, workers: number): Promise<Fleet> {
  const apiEnv = { ...env, PORT: String(port) };
  const everyone: ChildService[] = [];
  const alive: ChildService[] = [];
  // Should this process end without stopping them (a test runner's timeout), its children go with it.
  const killAll = () => {
    for (const child of everyone) if (child.process.exitCode === null) child.process.kill('SIGKILL');
  };
  process.once('exit', killAll);
  let api: ChildService;

  async function startApi(): Promise<ChildService> {
    // An engine may still be settling: try again until the API answers (bounded).
    const deadline = Date.now() + 180_000;
    for (;;) {
      try {
        const started = await startChild(['serve', '--stages', 'none'], apiEnv, { timeoutMs: 120_000 });
        everyone.push(started);
        return started;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }

  const fleet: Fleet = {
    url: `http://127.0.0.1:${port}`,
    workers: alive,
    async addWorker() {
      const worker = await startChild(['worker'], env, { waitForHttp: false });
      everyone.push(worker);
      try {
        await waitForWorker(worker, 180_000);
      } catch (error) {
        await stopChild(worker, 'SIGKILL');
        throw error;
      }
      alive.push(worker);
      return worker;
    },
    async killWorker() {
      if (alive.length < 2) await fleet.addWorker();
      const victim = alive.splice(Math.floor(Math.random() * alive.length), 1)[0] as ChildService;
      victim.process.kill('SIGKILL');
      await victim.exited;
    },
    async restartApi() {
      api.process.kill('SIGKILL');
      await api.exited;
      api = await startApi();
    },
    output() {
      return everyone
        .map((c) => `--- kb ${c.process.spawnargs.slice(2).join(' ')} (pid ${c.process.pid}):\n${tail(c.output())}`)
        .join('\n');
    },
    async stop() {
      await Promise.allSettled(everyone.map((c) => stopChild(c)));
      process.off('exit', killAll);
    },
  };
  const starting = [
    startChild(['serve', '--stages', 'none'], apiEnv, { timeoutMs: 180_000 }).then((started) => {
      everyone.push(started);
      api = started;
    }),
    ...Array.from({ length: workers }, () => fleet.addWorker()),
  ];
  const started = await Promise.allSettled(starting);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await fleet.stop();
    throw failed.reason;
  }
  return fleet;
}

/** The native engine scripts of the checkout that started the engines. */
export interface EngineControl {
  /** Stops `engine` keeping its data and starts it again; resolves when it is ready (its `up` passed). */
  restart(engine: Engine): Promise<{ readyAt: number }>;
  /** Brings every engine this control stopped back up and ready (idempotent); throws when one stays down. */
  restoreAll(): Promise<void>;
}

export function createEngineControl(
  nativeDir: string,
  progress: (message: string) => void,
  /** Engines to bring up in `restoreAll` even if this control did not stop them. */
  restore: readonly Engine[] = [],
): EngineControl {
  const touched = new Set<Engine>(restore);
  const script = (name: string) => path.join(nativeDir, name);
  async function up(engine: Engine): Promise<void> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await run('bash', [script('up'), engine], { timeout: 400_000, maxBuffer: 16 * 1024 * 1024 });
        return;
      } catch (error) {
        lastError = error;
        const e = error as { stdout?: string };
        progress(`chaos: up ${engine} failed (attempt ${attempt}): ${tail(e.stdout ?? String(error), 8)}`);
      }
    }
    throw new Error(`${engine} did not come back up: ${String(lastError)}`);
  }
  return {
    async restart(engine) {
      touched.add(engine);
      await run('bash', [script('down'), '--keep-data', engine], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
      await up(engine);
      return { readyAt: Date.now() };
    },
    async restoreAll() {
      const failures: string[] = [];
      for (const engine of touched) {
        try {
          await up(engine);
        } catch (error) {
          failures.push(String(error));
        }
      }
      if (failures.length > 0) throw new Error(failures.join('\n'));
    },
  };
}

interface PlannedFault {
  readonly fault: ChaosFault;
  readonly action: string;
  perform(): Promise<number>;
}

/**
 * The faults to make, interleaved: worker changes (`workerRounds` times a worker added and one
 * killed), engine restarts and the API kill take turns.
 */
function plan(
  faults: readonly ChaosFault[],
  fleet: Fleet,
  engines: EngineControl,
  workerRounds: number,
): PlannedFault[] {
  const workerSteps: PlannedFault[] = [];
  if (faults.includes('workers')) {
    const add: PlannedFault = {
      fault: 'workers',
      action: 'add a worker',
      perform: () => fleet.addWorker().then(() => Date.now()),
    };
    const kill: PlannedFault = {
      fault: 'workers',
      action: 'kill -9 a worker',
      perform: () => fleet.killWorker().then(() => Date.now()),
    };
    for (let round = 0; round < workerRounds; round++) workerSteps.push(add, kill);
  }
  const engineSteps: PlannedFault[] = ENGINE_FAULTS.filter((e) => faults.includes(e)).map((engine) => ({
    fault: engine,
    action: `restart ${engine}`,
    perform: async () => (await engines.restart(engine)).readyAt,
  }));
  const apiSteps: PlannedFault[] = faults.includes('api')
    ? [
        {
          fault: 'api',
          action: 'kill -9 the API and start it again',
          perform: () => fleet.restartApi().then(() => Date.now()),
        },
      ]
    : [];
  const queues = [workerSteps, engineSteps, apiSteps];
  const ordered: PlannedFault[] = [];
  while (queues.some((q) => q.length > 0)) {
    for (const queue of queues) {
      const next = queue.shift();
      if (next) ordered.push(next);
    }
  }
  return ordered;
}

/**
 * Makes the faults one after another, spread over `spreadMs` from now, each at least `minGapMs`
 * after the previous one became ready. Resolves with what happened once the last one is over.
 */
export async function runFaults(options: {
  readonly faults: readonly ChaosFault[];
  readonly fleet: Fleet;
  readonly engines: EngineControl;
  readonly spreadMs: number;
  readonly minGapMs: number;
  /** How many times a worker is added and one killed, with `workers` among the faults (default 2). */
  readonly workerRounds?: number;
  readonly progress: (message: string) => void;
  /** Told how many faults there will be, then each time one starts (so the clients can keep pace). */
  readonly onStep?: (started: number, total: number) => void;
}): Promise<FaultRecord[]> {
  const steps = plan(options.faults, options.fleet, options.engines, options.workerRounds ?? 2);
  options.onStep?.(0, steps.length);
  const records: FaultRecord[] = [];
  const started = Date.now();
  let free = started;
  for (const [i, step] of steps.entries()) {
    const at = Math.max(started + ((i + 1) * options.spreadMs) / (steps.length + 1), free + options.minGapMs);
    await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
    const startedAt = Date.now();
    options.onStep?.(i + 1, steps.length);
    options.progress(`chaos: ${step.action}`);
    try {
      const readyAt = await step.perform();
      records.push({ fault: step.fault, action: step.action, startedAt, readyAt });
      options.progress(`chaos: ${step.action}: ready after ${((readyAt - startedAt) / 1000).toFixed(1)} s`);
    } catch (error) {
      records.push({ fault: step.fault, action: step.action, startedAt, readyAt: null, error: String(error) });
      options.progress(`chaos: ${step.action} failed: ${String(error).slice(0, 500)}`);
    }
    free = Date.now();
  }
  return records;
}
