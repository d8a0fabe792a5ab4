import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'piscina';
import { type ChunkerOptions, type ChunkingResult, chunkDocument } from '../chunking/chunker.ts';
import { KbError } from '../errors/kb-error.ts';
import { createOcrEngine, type OcrEngine } from '../parsing/ocr.ts';
import { type ParseLimitOverrides, parseDocument } from '../parsing/parse-document.ts';
import type { ParsedDocument } from '../parsing/parsed-document.ts';

/** What the pool sends: the file's bytes (transferred, not copied) and its detected type. */
export interface ParseTask {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly filename?: string;
  /** The task's time limit; OCR stops taking new pages once most of it is spent. */
  readonly timeLimitMs?: number;
  /** Told as soon as this thread starts the task, so the time limit counts parsing only. */
  readonly started?: MessagePort;
}

/** Chunking of a parsed document, run in the same threads so a long text never blocks the event loop. */
export interface ChunkTask {
  readonly kind: 'chunk';
  readonly document: ParsedDocument;
  readonly options: ChunkerOptions;
  readonly started?: MessagePort;
}

export type ChunkTaskResult =
  | { readonly ok: true; readonly result: ChunkingResult }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Set once per pool, passed to every thread. */
export interface ParseWorkerData {
  readonly ocr: boolean;
  readonly limits?: ParseLimitOverrides;
}

/** Errors cross the thread boundary as plain data and are rebuilt as KbError by the pool. */
export type ParseTaskResult =
  | { readonly ok: true; readonly document: ParsedDocument }
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * Share of the time limit after which no new page is OCR'd; one page takes seconds, so the rest is
 * left for the page in progress and the remaining text pages.
 */
const OCR_SHARE_OF_TIME_LIMIT = 0.6;

const settings = (workerData ?? { ocr: false }) as ParseWorkerData;

// One OCR engine per thread, created on first use and kept for the thread's life.
let ocrEngine: OcrEngine | null = null;
const ocr = (): OcrEngine | null => {
  if (!settings.ocr) return null;
  ocrEngine ??= createOcrEngine();
  return ocrEngine;
};

/** Runs one task in this thread: a parse or a chunking. */
export default async function runTask(task: ParseTask | ChunkTask): Promise<ParseTaskResult | ChunkTaskResult> {
  return 'kind' in task && task.kind === 'chunk' ? chunkTask(task) : parseTask(task as ParseTask);
}

/** Chunks one parsed document in this thread; reports errors instead of throwing. */
function chunkTask(task: ChunkTask): ChunkTaskResult {
  task.started?.postMessage('started');
  task.started?.close();
  try {
    return { ok: true, result: chunkDocument(task.document, task.options) };
  } catch (error) {
    if (error instanceof KbError) return { ok: false, code: error.code, message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, code: 'internal-error', message: `Chunking failed: ${message}` };
  }
}

/** Parses one file in this thread; never throws for a bad file, only reports. */
async function parseTask(task: ParseTask): Promise<ParseTaskResult> {
  task.started?.postMessage('started');
  task.started?.close();
  const ocrDeadline =
    task.timeLimitMs === undefined ? undefined : Date.now() + task.timeLimitMs * OCR_SHARE_OF_TIME_LIMIT;
  try {
    const document = await parseDocument(task.bytes, task.mimeType, {
      ocr: ocr(),
      limits: settings.limits ?? {},
      ...(ocrDeadline === undefined ? {} : { ocrDeadline }),
    });
    return { ok: true, document };
  } catch (error) {
    if (error instanceof KbError) return { ok: false, code: error.code, message: error.message };
    if (error instanceof RangeError && !/call stack/i.test(error.message)) {
      return {
        ok: false,
        code: 'content-too-large',
        message: `The file exceeds the parser's limits: ${error.message}`,
      };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, code: 'parser-crashed', message: `The parser failed: ${message}` };
  }
}
