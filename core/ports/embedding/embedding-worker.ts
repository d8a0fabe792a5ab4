import type { KbError } from '../../errors/kb-error.ts';

/** What an embedding worker thread posts to its host once it has started: a load failure or an answer to a request. */
export type WorkerAnswer =
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; dims: number; flat: Float32Array }
  | { type: 'error'; id: number; error: string };

/** A request posted to an embedding worker, waiting for its answer. */
export interface PendingRequest {
  /** How many texts the request holds, so how many vectors the answer must hold. */
  readonly count: number;
  resolve(vectors: Float32Array[]): void;
  reject(error: KbError): void;
}
