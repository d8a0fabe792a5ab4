import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ChunkerOptions, ChunkingResult } from '../chunking/chunker.ts';
import { type ErrorCode, isErrorCode } from '../errors/error-catalogue.ts';
import { KbError } from '../errors/kb-error.ts';
import type { ParseLimitOverrides } from '../parsing/parse-document.ts';
import type { ParsedDocument } from '../parsing/parsed-document.ts';
import { DEFAULT_ZIP_LIMITS } from '../parsing/zip-guard.ts';
import { createFairGate } from '../util/fair-gate.ts';
import type { ChunkTask, ChunkTaskResult, ParseTask, ParseTaskResult, ParseWorkerData } from './parse.worker.ts';

export interface ParsePoolOptions {
  /** Worker threads (each parses one file at a time). */
  readonly threads: number;
  /** Time limit of one parse, from the moment a thread starts it; then `parse-timeout`. */
  readonly taskTimeoutMs: number;
  /** Old-generation heap limit of each thread in MB; a thread that exceeds it dies: `parser-crashed`. */
  readonly maxHeapMb: number;
  /** OCR PDF pages without a text layer. */
  readonly ocr: boolean;
  /**
   * Parser limit overrides (see `DEFAULT_PARSE_LIMITS`). Unless set here, the zip guard's inflate
   * limits are the smaller of their defaults (200 MiB) and a third of `maxHeapMb`.
   */
  readonly limits?: ParseLimitOverrides;
  /**
   * Most callers waiting for a free thread; past it `parse` fails at once with the retriable
   * `service-unavailable`. Default 256.
   */
  readonly maxPending?: number;
  /**
   * Told about a thread that failed while no task was running (the pool replaces it either way).
   * Without it such failures are dropped, since an unheard pool `error` event would end the process.
   */
  readonly onThreadError?: (error: Error) => void;
  /** Largest input accepted; bigger files fail at once with `content-too-large`. Default 50 MiB. */
  readonly maxInputBytes?: number;
  /** Extra time a thread may take to start before its task fails with the retriable `timeout`. Default 30 s. */
  readonly startupGraceMs?: number;
}

export interface ParseInput {
  readonly bytes: Buffer | Uint8Array;
  /** One of the accepted MIME types, as detected on upload. */
  readonly mimeType: string;
  readonly filename?: string;
  /** Whom the work is for (the workspace): callers waiting for a thread take turns by share. */
  readonly share?: string;
}

export interface ParsePool {
  /**
   * Parses a file in a worker thread. Rejects with KbError: the parser's own codes (`corrupt-file`,
   * `encrypted-file`, `decompression-bomb`, `content-too-large`, `no-text`, `unsupported-content`),
   * `parse-timeout` when the task outlives `taskTimeoutMs` (its thread is terminated and replaced),
   * `parser-crashed` when the thread dies (out of memory or otherwise); `content-too-large` at once
   * for input over `maxInputBytes`; the retriable `service-unavailable` when the wait list is full or
   * the pool is closed, and `timeout` when no thread could start the task. The caller's buffer is
   * copied, never detached.
   */
  parse(input: ParseInput): Promise<ParsedDocument>;
  /**
   * Chunks a parsed document in a worker thread (see `chunkDocument`), with the same queue and time
   * limit as a parse, so a long text never blocks the caller's event loop. Rejects with the
   * chunker's `content-too-large` (over `options.maxChunks`), `parse-timeout`, `parser-crashed`, or
   * the pool's retriable errors as for `parse`.
   */
  chunk(document: ParsedDocument, options: ChunkerOptions, share?: string): Promise<ChunkingResult>;
  /** Waits for running parses, then stops every thread. Later `parse` calls fail. */
  close(): Promise<void>;
}

/** Rebuilds the worker's error report as a KbError. */
function toError(result: { readonly code: string; readonly message: string }): KbError {
  const code: ErrorCode = isErrorCode(result.code) ? result.code : 'parser-crashed';
  return new KbError(code, result.message);
}

/**
 * Creates the parsing pool: `threads` piscina worker threads running `parse.worker.ts` with
 * `resourceLimits`, one task per thread at a time. Callers beyond the free threads wait in a
 * bounded list here, so a task's timeout only counts its own parsing; they take turns by share
 * (the share whose tasks have taken the least thread time goes first, in arrival order within a
 * share), so a workspace's backlog of large files delays another's by at most the tasks running.
 */
export function createParsePool(options: ParsePoolOptions): ParsePool {
  const threads = Math.max(1, Math.floor(options.threads));
  const maxPending = options.maxPending ?? 256;
  const startupGraceMs = options.startupGraceMs ?? 30_000;
  const maxInputBytes = options.maxInputBytes ?? 50 * 1024 * 1024;
  // Libraries hold an OOXML file's inflated parts in the heap, so unless told otherwise the zip
  // guard keeps them to a third of it.
  const inflateBudget = Math.min(DEFAULT_ZIP_LIMITS.maxTotalBytes, Math.floor((options.maxHeapMb * 1024 * 1024) / 3));
  const limits: ParseLimitOverrides = {
    ...options.limits,
    zip: { maxTotalBytes: inflateBudget, maxEntryBytes: inflateBudget, ...options.limits?.zip },
  };
  const workerData: ParseWorkerData = { ocr: options.ocr, limits };
  const piscina = new Piscina<ParseTask | ChunkTask, ParseTaskResult | ChunkTaskResult>({
    // A small ES module that registers tsx in the thread, then loads parse.worker.ts.
    filename: new URL('./parse-worker.bootstrap.mjs', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    maxQueue: threads,
    concurrentTasksPerWorker: 1,
    idleTimeout: 60_000,
    execArgv: [],
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxHeapMb,
      maxYoungGenerationSizeMb: Math.max(8, Math.min(64, Math.floor(options.maxHeapMb / 8))),
      stackSizeMb: 4,
    },
    workerData,
  });

  piscina.on('error', (error: Error) => options.onThreadError?.(error));

  let closed = false;
  const gate = createFairGate({
    slots: threads,
    maxWaiting: maxPending,
    busy: () => new KbError('service-unavailable', `The parse pool is busy: ${maxPending} files are already waiting.`),
  });

  /** Runs one task in a thread with the time limit; `what` names it in errors ("Parsing", "Chunking"). */
  const runTask = async <R>(
    what: string,
    build: (started: MessagePort) => ParseTask | ChunkTask,
    transfer: ArrayBuffer[],
  ): Promise<R> => {
    // The time limit starts when the thread picks the task up (a replaced thread first has to
    // load), with a separate allowance for the thread to start at all.
    const channel = new MessageChannel();
    const controller = new AbortController();
    let reason: 'parse' | 'start' | null = null;
    let parseTimer: NodeJS.Timeout | undefined;
    const startTimer = setTimeout(() => {
      reason = 'start';
      controller.abort();
    }, options.taskTimeoutMs + startupGraceMs);
    channel.port1.once('message', () => {
      clearTimeout(startTimer);
      parseTimer = setTimeout(() => {
        reason = 'parse';
        controller.abort();
      }, options.taskTimeoutMs);
    });
    try {
      return (await piscina.run(build(channel.port2), {
        transferList: [...transfer, channel.port2],
        signal: controller.signal,
      })) as R;
    } catch (error) {
      if (reason === 'parse') {
        throw new KbError('parse-timeout', `${what} took longer than ${options.taskTimeoutMs} ms and was stopped.`);
      }
      if (reason === 'start') {
        throw new KbError('timeout', 'No parser thread could start the task in time.');
      }
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new KbError('parser-crashed', `The parser ran out of memory (limit ${options.maxHeapMb} MB).`);
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new KbError('parser-crashed', `The parser thread failed: ${message}`);
    } finally {
      clearTimeout(startTimer);
      clearTimeout(parseTimer);
      channel.port1.close();
    }
  };

  const run = async (input: ParseInput): Promise<ParsedDocument> => {
    // A private copy is transferred to the thread, so the caller's buffer stays usable.
    const bytes = new Uint8Array(input.bytes.byteLength);
    bytes.set(input.bytes);
    const result = await runTask<ParseTaskResult>(
      'Parsing',
      (started) => ({
        bytes,
        mimeType: input.mimeType,
        ...(input.filename === undefined ? {} : { filename: input.filename }),
        timeLimitMs: options.taskTimeoutMs,
        started,
      }),
      [bytes.buffer as ArrayBuffer],
    );
    if (!result.ok) throw toError(result);
    return result.document;
  };

  const chunk = async (document: ParsedDocument, chunkerOptions: ChunkerOptions): Promise<ChunkingResult> => {
    const result = await runTask<ChunkTaskResult>(
      'Chunking',
      (started) => ({ kind: 'chunk', document, options: chunkerOptions, started }),
      [],
    );
    if (!result.ok) throw toError(result);
    return result.result;
  };

  return {
    async parse(input) {
      if (input.bytes.byteLength > maxInputBytes) {
        throw new KbError(
          'content-too-large',
          `The file has ${input.bytes.byteLength} bytes; the parser accepts at most ${maxInputBytes}.`,
        );
      }
      return gate.run(input.share ?? '', () => run(input));
    },
    async chunk(document, chunkerOptions, share) {
      return gate.run(share ?? '', () => chunk(document, chunkerOptions));
    },
    async close() {
      if (closed) return;
      closed = true;
      gate.close(new KbError('service-unavailable', 'The parse pool is closed.'));
      await piscina.close();
    },
  };
}
