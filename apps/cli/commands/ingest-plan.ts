/**
 * What `kb ingest` does with each file: hashes it, asks the service in batches which documents
 * already stand for its (source, item), and decides to skip it (same content), upload it as a new
 * version (changed) or as a new document.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { IngestFile } from './ingest-files.ts';
import { type IngestTarget, type Known, lookup, pairKey } from './ingest-requests.ts';

/** Pairs asked per lookup request. */
export const LOOKUP_BATCH = 200;
/** Files hashed at once. */
const HASH_CONCURRENCY = 8;

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

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
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

/**
 * Hashes the files and looks their (source, item) pairs up, {@link LOOKUP_BATCH} a request. A
 * second file of a pair already taken in this run is a duplicate (reported, not uploaded). When the
 * key may not read documents (403) or the service has no lookup (404), every file is planned as
 * new and `notice` says so (the uploads' Idempotency-Keys still keep a re-run from creating
 * duplicates for as long as the service keeps the keys); a refused key (401) refuses the plan.
 */
export async function planIngest(
  target: IngestTarget,
  files: readonly IngestFile[],
  source: string | undefined,
): Promise<Plan> {
  const seen = new Map<string, string>();
  const duplicates: Array<{ file: string; reason: string }> = [];
  const unique: IngestFile[] = [];
  for (const file of files) {
    const key = pairKey(sourceOf(file, source), file.item);
    const first = seen.get(key);
    if (first !== undefined) {
      duplicates.push({ file: file.path, reason: `same source and path "${file.item}" as ${first}; not uploaded` });
    } else {
      seen.set(key, file.path);
      unique.push(file);
    }
  }
  const planned: PlannedFile[] = await mapLimited(unique, HASH_CONCURRENCY, async (file) => ({
    ...file,
    source: sourceOf(file, source),
    contentHash: await sha256(file.path),
  }));

  const found = new Map<string, Known>();
  let notice: string | undefined;
  for (let start = 0; start < planned.length; start += LOOKUP_BATCH) {
    const batch = planned.slice(start, start + LOOKUP_BATCH);
    const result = await lookup(
      target,
      batch.map((f) => ({ source: f.source, item: f.item })),
    );
    if ('failed' in result) return { failed: `looking the files up failed (${result.failed})` };
    if ('refused' in result) {
      if (result.status === 401) return { refused: result.refused };
      notice =
        result.status === 403
          ? 'this key may not read documents, so unchanged files cannot be recognised: every file is uploaded (give the key the read permission to skip unchanged files).'
          : 'the service cannot look documents up by source item (an older version?): every file is uploaded.';
      break;
    }
    for (const [key, known] of result.found) found.set(key, known);
  }
  const steps: Step[] = planned.map((file) => {
    const known = found.get(pairKey(file.source, file.item));
    if (known === undefined) return { kind: 'create', file };
    return known.contentHash === file.contentHash ? { kind: 'skip', file, known } : { kind: 'update', file, known };
  });
  return { steps, duplicates, ...(notice !== undefined ? { notice } : {}) };
}
