import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../../../core/util/time.ts';
import { type Command, print } from './command.ts';
import { collectFiles, INGEST_EXTENSIONS, type SkippedPath } from './ingest-files.ts';
import { followDocuments } from './ingest-follow.ts';
import { progressBar } from './progress.ts';
import { checkService, networkProblem } from './service-client.ts';

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
  readonly document_id: string;
}
interface Failed {
  readonly file: string;
  readonly reason: string;
}

/**
 * Bulk ingestion over the HTTP API: checks that the URL answers as the service, uploads every
 * supported file under the given paths with a bounded number of requests in flight (saying which
 * it skipped and why), honours 429 `Retry-After`, stops at once when the key is refused, and
 * (with `--wait`) follows every document to `completed` or `failed`.
 */
export const ingestCommand: Command = {
  async run(args, { config, out, err, usage }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: config.client.url },
        key: { type: 'string' },
        concurrency: { type: 'string', default: '4' },
        metadata: { type: 'string' },
        source: { type: 'string' },
        wait: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const key = values.key ?? config.client.apiKey;
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
    const { files, skipped } = await collectFiles(positionals);
    const reportSkipped = (list: readonly SkippedPath[]) => {
      if (values.json || list.length === 0) return;
      print(err, `Skipped ${list.length} ${list.length === 1 ? 'path' : 'paths'}:`);
      for (const s of list) print(err, `  - ${s.path}: ${s.reason}`);
    };
    if (files.length === 0) {
      reportSkipped(skipped);
      print(err, `kb ingest: no supported files (${INGEST_EXTENSIONS.join(' ')}) under ${positionals.join(', ')}.`);
      if (values.json) print(out, JSON.stringify({ uploaded: [], skipped, failed: [] }));
      return 1;
    }
    const unreachable = await checkService(options.base);
    if (unreachable) {
      print(err, `kb ingest: ${unreachable}`);
      return 1;
    }

    const bar = progressBar('Uploading');
    const uploaded: Uploaded[] = [];
    const failed: Failed[] = [];
    let refused: string | null = null;
    const record = (file: string, outcome: UploadOutcome) => {
      if ('documentId' in outcome) uploaded.push({ file, document_id: outcome.documentId });
      else {
        failed.push({ file, reason: outcome.reason });
        if (outcome.keyRefused) refused = outcome.reason;
      }
    };
    // The first file goes alone: a refused key stops the run before the progress bar starts and
    // before any other upload goes out.
    const first = files[0] as string;
    record(first, await uploadOne(first, options));
    let next = 1;
    const worker = async () => {
      while (next < files.length && refused === null) {
        const file = files[next++] as string;
        const outcome = await uploadOne(file, options);
        record(file, outcome);
        if (refused === null) bar.increment(path.basename(file));
      }
    };
    if (refused === null) {
      bar.start(files.length);
      bar.increment(path.basename(first));
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      bar.stop();
    }
    if (refused !== null) {
      print(err, `kb ingest: the service refused the API key (${refused}); use a key with write permission.`);
      if (values.json) print(out, JSON.stringify({ uploaded, skipped, failed }));
      return 1;
    }
    reportSkipped(skipped);
    if (!values.json) print(out, `Uploaded ${uploaded.length} of ${files.length} files.`);

    let processed: { completed: number; failed: number } | undefined;
    if (values.wait && uploaded.length > 0) {
      processed = await followDocuments(uploaded, options, failed);
      if (!values.json) {
        print(out, `Processed ${processed.completed} of ${uploaded.length} documents; ${processed.failed} failed.`);
      }
    }
    if (values.json) {
      print(out, JSON.stringify({ uploaded, skipped, failed, ...(processed ? { processed } : {}) }));
    } else {
      for (const f of failed) print(err, `  ✗ ${f.file}: ${f.reason}`);
    }
    return failed.length > 0 ? 1 : 0;
  },
};

type UploadOutcome = { documentId: string } | { reason: string; keyRefused: boolean };

async function uploadOne(file: string, options: IngestOptions): Promise<UploadOutcome> {
  for (let attempt = 1; ; attempt++) {
    const form = new FormData();
    if (options.metadata) form.append('metadata', options.metadata);
    if (options.source) form.append('source', options.source);
    form.append('file', await openAsBlob(file), path.basename(file));
    let response: Response;
    try {
      response = await fetch(`${options.base}/api/v1/documents`, {
        method: 'POST',
        headers: { 'X-API-Key': options.key },
        body: form,
      });
    } catch (error) {
      if (attempt < 5) {
        await sleep(500 * attempt);
        continue;
      }
      return { reason: `the service did not answer (${networkProblem(error)})`, keyRefused: false };
    }
    if (response.status === 429 && attempt < 20) {
      await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000);
      continue;
    }
    const body = (await response.json().catch(() => ({}))) as { document_id?: string; detail?: string };
    if (response.status === 201 && body.document_id) return { documentId: body.document_id };
    return {
      reason: `${response.status} ${body.detail ?? ''}`.trim(),
      keyRefused: response.status === 401 || response.status === 403,
    };
  }
}
