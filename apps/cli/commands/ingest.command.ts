import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Command, print } from './command.ts';
import { collectFiles, INGEST_EXTENSIONS, type SkippedPath } from './ingest-files.ts';
import { planIngest, type Step } from './ingest-plan.ts';
import {
  createDocument,
  createKey,
  documentExists,
  type IngestTarget,
  replaceDocument,
  updateKey,
  type WriteOutcome,
} from './ingest-requests.ts';
import { checkService } from './service-client.ts';

interface IngestOptions {
  readonly base: string;
  readonly key: string;
  readonly concurrency: number;
  readonly metadata: string | undefined;
  readonly source: string | undefined;
}

/** Validates the options; returns them or the one-line reason they are wrong. */
function readOptions(values: Record<string, string | boolean | undefined>, key: string): IngestOptions | string {
  const concurrencyText = String(values.concurrency);
  const concurrency = Number(concurrencyText);
  if (!/^\d+$/.test(concurrencyText) || concurrency < 1 || concurrency > 64) {
    return `--concurrency must be a whole number from 1 to 64, not "${concurrencyText}".`;
  }
  const url = String(values.url);
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    return `--url must be the service's http(s) URL, e.g. http://127.0.0.1:8080, not "${url}".`;
  }
  const metadata = values.metadata as string | undefined;
  if (metadata !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(metadata);
    } catch {
      return `--metadata must be a JSON object, e.g. '{"team":"docs"}'; "${metadata}" is not valid JSON.`;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return `--metadata must be a JSON object, e.g. '{"team":"docs"}', not ${Array.isArray(parsed) ? 'an array' : JSON.stringify(parsed)}.`;
    }
  }
  const source = values.source as string | undefined;
  if (source !== undefined && (source.trim() === '' || [...source].length > 256)) {
    return '--source must be 1 to 256 characters.';
  }
  return { base: url.replace(/\/+$/, ''), key, concurrency, metadata, source };
}

interface Uploaded {
  readonly file: string;
  readonly source: string;
  readonly source_item: string;
  readonly document_id: string;
  readonly version: number;
  readonly outcome: 'created' | 'updated';
}
interface Failed {
  readonly file: string;
  readonly reason: string;
}

/** What a run did: the counts, and the files behind them. */
interface Report {
  skipped: number;
  created: number;
  updated: number;
  uploaded: Uploaded[];
  failures: Failed[];
}

/** How many times a create answered from an earlier run's key may move on to a key of its own. */
const MAX_RECREATES = 3;

/**
 * Runs one step: a skip counts at once; a create or an update goes out with its Idempotency-Key.
 * A create answered from an earlier run's key (a replay on the first attempt) whose document was
 * deleted since is sent again under a key derived from that document, so it is created anew.
 */
async function runStep(step: Step, target: IngestTarget): Promise<WriteOutcome | 'skipped'> {
  const { file } = step;
  if (step.kind === 'skip') return 'skipped';
  if (step.kind === 'update') {
    return replaceDocument(
      target,
      file,
      step.known.documentId,
      updateKey(step.known.documentId, step.known.version, file.contentHash),
    );
  }
  let key = createKey(file.source, file.item, file.contentHash);
  for (let round = 0; ; round++) {
    const outcome = await createDocument(target, file, key);
    if (!('documentId' in outcome) || !outcome.replayed || outcome.attempts > 1) return outcome;
    // The lookup did not see this document: gone since, or not visible yet.
    if (round >= MAX_RECREATES || (await documentExists(target, outcome.documentId))) return 'skipped';
    key = createKey(file.source, file.item, file.contentHash, outcome.documentId);
  }
}

/**
 * Bulk ingestion over the HTTP API, safe to run again: every supported file under the given paths
 * is recorded with its path relative to its folder argument as `source_item` (and name) under a
 * source (`--source`, else the folder's name), so a second run skips unchanged files, uploads a
 * changed one as a new version of its document and a new one as a new document, telling which by
 * looking the paths up in batches. Uploads carry an Idempotency-Key derived from the path and
 * content (a retried upload whose answer was lost creates one document), go out with a bounded
 * number in flight, wait out 429/503 `Retry-After`, stop at once when the key is refused, and
 * (with `--wait`) are followed to `completed` or `failed`.
 */
export const ingestCommand: Command = {
  async run(args, { client, out, err, usage }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: client.url },
        key: { type: 'string' },
        concurrency: { type: 'string', default: '4' },
        metadata: { type: 'string' },
        source: { type: 'string' },
        wait: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const key = values.key ?? client.apiKey;
    if (!key) {
      print(err, 'kb ingest needs an API key with write permission: --key ink_…, KB_API_KEY or KB_KEY.');
      return 2;
    }
    if (positionals.length === 0) {
      print(err, `kb ingest needs at least one file or folder.\n\nUsage: ${usage}`);
      return 2;
    }
    const options = readOptions(values, key);
    if (typeof options === 'string') {
      print(err, `kb ingest: ${options}`);
      return 2;
    }
    const target: IngestTarget = { base: options.base, key: options.key, metadata: options.metadata };
    const report: Report = { skipped: 0, created: 0, updated: 0, uploaded: [], failures: [] };
    const summary = (ignored: readonly SkippedPath[], extra: object = {}) => ({
      skipped: report.skipped,
      created: report.created,
      updated: report.updated,
      failed: report.failures.length,
      uploaded: report.uploaded,
      failures: report.failures,
      ignored,
      ...extra,
    });
    const { files, skipped: ignored } = collectFiles(positionals);
    const reportIgnored = () => {
      if (values.json || ignored.length === 0) return;
      print(err, `Ignored ${ignored.length} ${ignored.length === 1 ? 'path' : 'paths'}:`);
      for (const s of ignored) print(err, `  - ${s.path}: ${s.reason}`);
    };
    if (files.length === 0) {
      reportIgnored();
      print(err, `kb ingest: no supported files (${INGEST_EXTENSIONS.join(' ')}) under ${positionals.join(', ')}.`);
      if (values.json) print(out, JSON.stringify(summary(ignored)));
      return 1;
    }
    const unreachable = await checkService(options.base);
    if (unreachable) {
      print(err, `kb ingest: ${unreachable}`);
      return 1;
    }
    const refusedKey = (reason: string) => {
      print(err, `kb ingest: the service refused the API key (${reason}); use a key with write permission.`);
      if (values.json) print(out, JSON.stringify(summary(ignored)));
      return 1;
    };

    const plan = await planIngest(target, files, options.source);
    if ('refused' in plan) return refusedKey(plan.refused);
    if ('failed' in plan) {
      print(err, `kb ingest: ${plan.failed}`);
      return 1;
    }
    report.failures.push(...plan.duplicates);
    const writes = plan.steps.filter((s) => s.kind !== 'skip');
    report.skipped += plan.steps.length - writes.length;

    let refused: string | null = null;
    const record = (step: Step, outcome: WriteOutcome | 'skipped') => {
      if (outcome === 'skipped') report.skipped++;
      else if ('documentId' in outcome) {
        const kind = step.kind === 'update' ? 'updated' : 'created';
        report[kind]++;
        report.uploaded.push({
          file: step.file.path,
          source: step.file.source,
          source_item: step.file.item,
          document_id: outcome.documentId,
          version: outcome.version,
          outcome: kind,
        });
      } else {
        report.failures.push({ file: step.file.path, reason: outcome.reason });
        if (outcome.keyRefused) refused = outcome.reason;
      }
    };
    // The first upload goes alone: a refused key stops the run before the progress bar starts and
    // before any other upload goes out.
    if (writes.length > 0) {
      // Loaded only when there is something to upload (or, below, to follow): a re-run that finds
      // nothing changed is mostly the command's start.
      const bar = (await import('./progress.ts')).progressBar('Uploading');
      const first = writes[0] as Step;
      record(first, await runStep(first, target));
      let next = 1;
      const worker = async () => {
        while (next < writes.length && refused === null) {
          const step = writes[next++] as Step;
          record(step, await runStep(step, target));
          if (refused === null) bar.increment(path.basename(step.file.path));
        }
      };
      if (refused === null) {
        bar.start(writes.length);
        bar.increment(path.basename(first.file.path));
        await Promise.all(Array.from({ length: options.concurrency }, worker));
        bar.stop();
      }
    }
    if (refused !== null) return refusedKey(refused);
    if (plan.notice && !values.json) print(err, `kb ingest: ${plan.notice}`);
    reportIgnored();
    if (!values.json) {
      print(
        out,
        `Ingested ${files.length} ${files.length === 1 ? 'file' : 'files'}: ${report.created} created, ${report.updated} updated, ${report.skipped} skipped (unchanged), ${report.failures.length} failed.`,
      );
    }

    let processed: { completed: number; failed: number } | undefined;
    if (values.wait && report.uploaded.length > 0) {
      const { followDocuments } = await import('./ingest-follow.ts');
      processed = await followDocuments(report.uploaded, options, report.failures);
      if (!values.json) {
        print(
          out,
          `Processed ${processed.completed} of ${report.uploaded.length} documents; ${processed.failed} failed.`,
        );
      }
    }
    if (values.json) {
      print(out, JSON.stringify(summary(ignored, processed ? { processed } : {})));
    } else {
      for (const f of report.failures) print(err, `  ✗ ${f.file}: ${f.reason}`);
    }
    return report.failures.length > 0 ? 1 : 0;
  },
};
