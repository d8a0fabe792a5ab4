/**
 * What `kb ingest` does with each file: hashes it, asks the service in batches which documents
 * already stand for its (source, item), and decides to skip it (same content), upload it as a new
 * version (changed) or as a new document.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import type { IngestFile } from './ingest-files.ts';
import { type IngestTarget, type Known, lookup, pairKey } from './ingest-requests.ts';

/** Pairs asked per lookup request (the service takes up to 1000). */
export const LOOKUP_BATCH = 500;
/** Lookup requests in flight at once. */
const LOOKUP_CONCURRENCY = 2;
/** Files hashed at once. */
const HASH_CONCURRENCY = 16;
/**
 * Files up to this size are read whole, at once, to be hashed (a promise-based open, stat, read and
 * close of each costs more than the read itself); larger ones are streamed.
 */
const READ_WHOLE_BYTES = 256 * 1024;

export interface PlannedFile extends IngestFile {
  readonly source: string;
  readonly contentHash: string;
}

export type Step =
  | { readonly kind: 'create'; readonly file: PlannedFile }
  | { readonly kind: 'update'; readonly file: PlannedFile; readonly known: Known }
  | { readonly kind: 'skip'; readonly file: PlannedFile; readonly known: Known };

export type Plan =
  | { readonly steps: Step[]; readonly duplicates: Array<{ file: string; reason: string }>; readonly notice?: string }
  | { readonly refused: string }
  | { readonly failed: string };

/** The source of a file: `--source`, else its folder's name, else `upload` (file arguments). */
export function sourceOf(file: IngestFile, given: string | undefined): string {
  if (given !== undefined) return given;
  if (file.folder === null) return 'upload';
  return path.basename(path.resolve(file.folder)) || 'upload';
}

async function sha256(file: IngestFile): Promise<string> {
  const hash = createHash('sha256');
  if (file.size <= READ_WHOLE_BYTES) return hash.update(readFileSync(file.path)).digest('hex');
  for await (const chunk of createReadStream(file.path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Runs `work` over `items` with at most `concurrency` at once, keeping the order of the results. */
async function mapLimited<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** The lookups of every pair, {@link LOOKUP_BATCH} a request, some in flight at once. */
async function lookupAll(
  target: IngestTarget,
  pairs: ReadonlyArray<{ source: string; item: string }>,
): Promise<{ found: Map<string, Known>; notice?: string } | { refused: string } | { failed: string }> {
  const batches: Array<ReadonlyArray<{ source: string; item: string }>> = [];
  for (let start = 0; start < pairs.length; start += LOOKUP_BATCH)
    batches.push(pairs.slice(start, start + LOOKUP_BATCH));
  const results = await mapLimited(batches, LOOKUP_CONCURRENCY, (batch) => lookup(target, batch));
  const found = new Map<string, Known>();
  for (const result of results) {
    if ('failed' in result) return { failed: `looking the files up failed (${result.failed})` };
    if ('refused' in result) {
      if (result.status === 401) return { refused: result.refused };
      return {
        found: new Map(),
        notice:
          result.status === 403
            ? 'this key may not read documents, so unchanged files cannot be recognised: every file is uploaded (give the key the read permission to skip unchanged files).'
            : 'the service cannot look documents up by source item (an older version?): every file is uploaded.',
      };
    }
    for (const [key, known] of result.found) found.set(key, known);
  }
  return { found };
}

/**
 * Hashes the files and, at the same time, looks their (source, item) pairs up (the lookup does not
 * need the content). A second file of a pair already taken in this run is a duplicate (reported,
 * not uploaded). When the key may not read documents (403) or the service has no lookup (404),
 * every file is planned as new and `notice` says so (the uploads' Idempotency-Keys still keep a
 * re-run from creating duplicates for as long as the service keeps the keys); a refused key (401)
 * refuses the plan.
 */
export async function planIngest(
  target: IngestTarget,
  files: readonly IngestFile[],
  source: string | undefined,
): Promise<Plan> {
  const seen = new Map<string, string>();
  const duplicates: Array<{ file: string; reason: string }> = [];
  const unique: Array<IngestFile & { readonly source: string }> = [];
  for (const file of files) {
    const fileSource = sourceOf(file, source);
    const key = pairKey(fileSource, file.item);
    const first = seen.get(key);
    if (first !== undefined) {
      duplicates.push({ file: file.path, reason: `same source and path "${file.item}" as ${first}; not uploaded` });
    } else {
      seen.set(key, file.path);
      unique.push({ ...file, source: fileSource });
    }
  }
  // The lookups go out first; the hashing, mostly synchronous reads, lets their answers in now and then.
  const lookups = lookupAll(
    target,
    unique.map((f) => ({ source: f.source, item: f.item })),
  );
  let hashed = 0;
  const planned = await mapLimited(unique, HASH_CONCURRENCY, async (file): Promise<PlannedFile> => {
    if (++hashed % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    return { ...file, contentHash: await sha256(file) };
  });
  const looked = await lookups;
  if ('refused' in looked || 'failed' in looked) return looked;
  const steps: Step[] = planned.map((file) => {
    const known = looked.found.get(pairKey(file.source, file.item));
    if (known === undefined) return { kind: 'create', file };
    return known.contentHash === file.contentHash ? { kind: 'skip', file, known } : { kind: 'update', file, known };
  });
  return { steps, duplicates, ...(looked.notice !== undefined ? { notice: looked.notice } : {}) };
}
