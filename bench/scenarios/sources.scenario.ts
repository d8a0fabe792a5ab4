/**
 * Folder sources: a folder of small files synced once, re-synced unchanged (goal ≤ 60 s and no
 * embedding at all), then with 1 % of the files changed — timed from the sync request until every
 * changed document's new version is served, against the same number of new versions uploaded
 * through the API (`PUT`) and served (goal ≤ 2×). Embedded runtime, in this process, with the
 * configured embedding provider counted.
 */
import { openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { STAGE_NAMES } from '../../core/events/events.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { passage } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { startInProcess, waitForIngestion } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';

/** The provider, counting the texts it embeds for documents. */
function counting(provider: EmbeddingProvider): EmbeddingProvider & { readonly texts: () => number } {
  let texts = 0;
  return {
    provider: provider.provider,
    model: provider.model,
    dimensions: provider.dimensions,
    embedDocuments(batch) {
      texts += batch.length;
      return provider.embedDocuments(batch);
    },
    embedQuery: (text) => provider.embedQuery(text),
    close: async () => {},
    texts: () => texts,
  };
}

const seconds = (since: number) => (performance.now() - since) / 1000;

export async function sourcesScenario(ctx: BenchContext, target: Target, files: number): Promise<Row> {
  const row = createRow('sources: folder sync', target.runtime, `${files} files`);
  if (target.runtime !== 'embedded') {
    row.skipped = 'embedded runtime only';
    return row;
  }
  const instance = await target.fresh();
  const root = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-sources-'));
  const provider = counting(ctx.provider);
  const config = {
    ...instance.config,
    sources: { ...instance.config.sources, folderRoots: [{ workspace: '*', path: root }] },
  };
  const service = await startInProcess({ ...instance, config }, { embeddings: provider });
  try {
    await service.runtime.startStages(STAGE_NAMES);
    const key = service.keys[0] as string;
    const call = async (method: string, pathname: string, body?: unknown) => {
      const response = await fetch(`${service.url}${pathname}`, {
        method,
        headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const parsed = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${method} ${pathname} answered ${response.status}: ${JSON.stringify(parsed)}`);
      return parsed;
    };

    const folder = path.join(root, 'notes');
    await mkdir(folder, { recursive: true });
    const rng = createRandom(ctx.options.seed);
    const texts: string[] = [];
    for (let i = 0; i < files; i++) {
      texts.push(`# Note ${i}\n\n${passage(rng)}\n`);
      await writeFile(path.join(folder, `note-${String(i).padStart(5, '0')}.md`), texts[i] as string);
    }
    const source = await call('POST', '/api/v1/sources', { name: 'notes', kind: 'folder', path: folder });
    const sourceId = String(source.id);
    const sync = async () => {
      const started = (await call('POST', `/api/v1/sources/${sourceId}/sync`)) as { run_id: string };
      for (;;) {
        const run = await call('GET', `/api/v1/sources/${sourceId}/runs/${started.run_id}`);
        if (run.status !== 'running') {
          if (run.status !== 'completed')
            throw new Error(`the sync ended ${String(run.status)}: ${JSON.stringify(run.errors)}`);
          return run as { counts: Record<string, number> };
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    ctx.progress(`sources: first sync of ${files} files`);
    let since = performance.now();
    const first = await sync();
    const firstSync = seconds(since);
    await waitForIngestion(service.runtime.ports.documents, service.workspaceId, files, 3_600_000);
    const firstServed = seconds(since);
    addFigure(row, 'first sync (run)', 's', [firstSync]);
    addFigure(row, 'first sync, all served', 's', [firstServed]);
    if (first.counts.created !== files) row.notes.push(`first sync created ${first.counts.created} of ${files}`);

    ctx.progress('sources: unchanged re-sync');
    const embeddedBefore = provider.texts();
    since = performance.now();
    const again = await sync();
    judge(addFigure(row, 'unchanged re-sync', 's', [seconds(since)]), { atMost: 60 });
    judge(addFigure(row, 'texts embedded by the unchanged re-sync', 'texts', [provider.texts() - embeddedBefore]), {
      atMost: 0,
    });
    if (again.counts.unchanged !== files)
      row.notes.push(`unchanged re-sync saw ${again.counts.unchanged} unchanged of ${files}`);

    const changed = Math.max(1, Math.round(files / 100));
    const items = await service.runtime.ports.sources.listItems(sourceId);
    const docOf = new Map(items.map((item) => [item.itemKey, item.documentId]));
    const waitServed = async (ids: readonly string[], version: number) => {
      for (const id of ids) {
        for (;;) {
          const doc = await service.runtime.ports.documents.getDocument(service.workspaceId, id);
          if (doc && doc.servedVersion !== null && doc.servedVersion >= version) break;
          if (doc?.latest.status === 'failed') throw new Error(`document ${id} failed: ${doc.latest.error?.code}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };

    ctx.progress(`sources: ${changed} files changed (1 %)`);
    const syncedIds: string[] = [];
    for (let i = 0; i < changed; i++) {
      const name = `note-${String(i).padStart(5, '0')}.md`;
      await writeFile(
        path.join(folder, name),
        `${texts[i]}\nA revised paragraph, number ${i}, about copper kettles.\n`,
      );
      syncedIds.push(docOf.get(name) as string);
    }
    const embeddedBeforeChange = provider.texts();
    since = performance.now();
    const partial = await sync();
    await waitServed(syncedIds, 2);
    const syncChanged = seconds(since);
    addFigure(row, `sync of ${changed} changed files, all served`, 's', [syncChanged]);
    addFigure(row, 'texts embedded for them', 'texts', [provider.texts() - embeddedBeforeChange]);
    if (partial.counts.updated !== changed)
      row.notes.push(`the 1 % sync updated ${partial.counts.updated} of ${changed}`);

    ctx.progress(`sources: the same number of new versions uploaded through the API`);
    const uploadIds: string[] = [];
    const uploads: string[] = [];
    for (let i = 0; i < changed; i++) {
      const name = `note-${String(files - 1 - i).padStart(5, '0')}.md`;
      const file = path.join(root, 'uploads', name);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${texts[files - 1 - i]}\nA revised paragraph, number ${i}, about brass kettles.\n`);
      uploads.push(file);
      uploadIds.push(docOf.get(name) as string);
    }
    since = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < uploads.length) {
        const i = next++;
        const form = new FormData();
        form.append('file', await openAsBlob(uploads[i] as string), path.basename(uploads[i] as string));
        const response = await fetch(`${service.url}/api/v1/documents/${uploadIds[i]}`, {
          method: 'PUT',
          headers: { 'X-API-Key': key },
          body: form,
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`PUT answered ${response.status}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, uploads.length) }, worker));
    await waitServed(uploadIds, 2);
    const uploaded = seconds(since);
    addFigure(row, `${changed} PUT uploads through the API, all served`, 's', [uploaded]);
    judge(addFigure(row, 'changed-files sync ÷ API uploads', 'ratio', [syncChanged / uploaded]), { atMost: 2 });
    row.notes.push('one round; the unchanged re-sync reads no file (size and modification time match)');
    return row;
  } finally {
    await service.close();
    await instance.cleanup();
    await rm(root, { recursive: true, force: true });
  }
}
