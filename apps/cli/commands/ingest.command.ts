import { openAsBlob } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Command, print } from './command.ts';
import { progressBar } from './progress.ts';

const EXTENSIONS = new Set(['.txt', '.md', '.markdown', '.csv', '.json', '.pdf', '.docx', '.xlsx']);

async function collect(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const walk = async (p: string) => {
    const info = await stat(p);
    if (info.isDirectory()) {
      const entries = await readdir(p, { withFileTypes: true });
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.name.startsWith('.')) continue;
        await walk(path.join(p, entry.name));
      }
    } else if (info.isFile() && EXTENSIONS.has(path.extname(p).toLowerCase())) {
      files.push(p);
    }
  };
  for (const p of paths) await walk(p);
  return files;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Bulk ingestion over the HTTP API: uploads every supported file under the given paths with a
 * bounded number of requests in flight, honours 429 `Retry-After`, and (with `--wait`) follows
 * every document to `completed` or `failed`.
 */
export const ingestCommand: Command = {
  summary: 'Upload files and folders through the API, with a progress bar',
  usage:
    'kb ingest <file|folder>... [--url http://127.0.0.1:8080] [--key ink_…] [--concurrency 4] [--metadata \'{"k":"v"}\'] [--source name] [--wait]',
  async run(args, { config, out, err }) {
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
      },
    });
    const key = values.key ?? config.client.apiKey;
    if (!key) {
      print(err, 'kb ingest needs an API key with write permission: --key ink_… or KB_API_KEY.');
      return 2;
    }
    if (positionals.length === 0) {
      print(err, `Usage: ${this.usage}`);
      return 2;
    }
    const concurrency = Math.max(1, Math.min(64, Number(values.concurrency) || 4));
    const files = await collect(positionals);
    if (files.length === 0) {
      print(err, `No supported files (${[...EXTENSIONS].join(' ')}) under ${positionals.join(', ')}.`);
      return 1;
    }
    const base = values.url.replace(/\/+$/, '');
    const bar = progressBar('Uploading');
    bar.start(files.length);
    const failures: string[] = [];
    const ids: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const file = files[next++] as string;
        for (let attempt = 1; ; attempt++) {
          const form = new FormData();
          form.append('file', await openAsBlob(file), path.basename(file));
          if (values.metadata) form.append('metadata', values.metadata);
          if (values.source) form.append('source', values.source);
          const response = await fetch(`${base}/api/v1/documents`, {
            method: 'POST',
            headers: { 'X-API-Key': key },
            body: form,
          }).catch((error: unknown) => ({ error }) as const);
          if ('error' in response) {
            if (attempt < 5) {
              await sleep(500 * attempt);
              continue;
            }
            failures.push(`${file}: ${String(response.error)}`);
            break;
          }
          if (response.status === 429 && attempt < 20) {
            await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000);
            continue;
          }
          const body = (await response.json().catch(() => ({}))) as { document_id?: string; detail?: string };
          if (response.status === 201 && body.document_id) ids.push(body.document_id);
          else failures.push(`${file}: ${response.status} ${body.detail ?? ''}`.trim());
          break;
        }
        bar.increment(path.basename(file));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    bar.stop();
    print(out, `Uploaded ${ids.length} of ${files.length} files.`);
    if (values.wait && ids.length > 0) {
      const waiting = progressBar('Processing');
      waiting.start(ids.length);
      const pending = new Set(ids);
      let failed = 0;
      while (pending.size > 0) {
        for (const id of [...pending]) {
          const response = await fetch(`${base}/api/v1/documents/${id}`, { headers: { 'X-API-Key': key } });
          if (response.status === 429) {
            await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000);
            continue;
          }
          const doc = (await response.json()) as { status?: string; name?: string; error?: { code: string } | null };
          if (doc.status === 'completed' || doc.status === 'failed' || response.status === 404) {
            pending.delete(id);
            if (doc.status === 'failed') {
              failed++;
              failures.push(`${doc.name ?? id}: ingestion failed (${doc.error?.code ?? 'unknown'})`);
            }
            waiting.increment(doc.name ?? id);
          }
        }
        if (pending.size > 0) await sleep(500);
      }
      waiting.stop();
      print(out, `Processed ${ids.length - failed} of ${ids.length} documents; ${failed} failed.`);
    }
    for (const failure of failures) print(err, `  ✗ ${failure}`);
    return failures.length > 0 ? 1 : 0;
  },
};
