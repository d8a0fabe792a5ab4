import { createRequire } from 'node:module';
import path from 'node:path';
import type Tesseract from 'tesseract.js';

export interface OcrResult {
  readonly text: string;
  /** Mean word confidence, 0–100. */
  readonly confidence: number;
}

/** Optical character recognition of one page image. */
export interface OcrEngine {
  /** Recognises the text of an image (PNG, JPEG…). */
  recognize(image: Uint8Array): Promise<OcrResult>;
  /** Stops the underlying worker, if it was started. */
  terminate(): Promise<void>;
}

export interface OcrEngineOptions {
  /** Folder holding `eng.traineddata.gz`; defaults to the installed `@tesseract.js-data/eng` package. */
  readonly langPath?: string;
}

/**
 * The English LSTM model shipped by `@tesseract.js-data/eng` (integer-quantised "best" model).
 * Resolved from the installed package; never fetched.
 */
export function defaultLangPath(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@tesseract.js-data/eng');
  return path.join(path.dirname(entry), '4.0.0_best_int');
}

/**
 * Creates an OCR engine backed by one tesseract.js worker, started lazily on first use and reused
 * afterwards. Language data is read from a local folder (gzipped), never cached to disk, never
 * downloaded; recognitions run one at a time.
 */
export function createOcrEngine(options: OcrEngineOptions = {}): OcrEngine {
  let worker: Promise<Tesseract.Worker> | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const start = (): Promise<Tesseract.Worker> => {
    if (worker === null) {
      worker = import('tesseract.js').then(({ default: tesseract }) =>
        tesseract.createWorker('eng', tesseract.OEM.LSTM_ONLY, {
          langPath: options.langPath ?? defaultLangPath(),
          gzip: true,
          cacheMethod: 'none',
          errorHandler: () => {},
        }),
      );
      // A failed start must not poison later attempts.
      worker.catch(() => {
        worker = null;
      });
    }
    return worker;
  };

  return {
    recognize(image) {
      const run = queue.then(async () => {
        const w = await start();
        const { data } = await w.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
        return { text: data.text ?? '', confidence: data.confidence ?? 0 };
      });
      queue = run.catch(() => {});
      return run;
    },
    async terminate() {
      const current = worker;
      worker = null;
      if (current) await (await current).terminate();
    },
  };
}
