import { describe, expect, it } from 'vitest';
import { createKey, startChild, stopChild, tempDir, waitForDocument } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

/**
 * The embedded runtime keeps the log, offsets and files on disk: a process killed between an
 * upload and `completed` loses nothing, and after a restart the document completes.
 */
describe('embedded runtime survives a crash mid-ingestion', () => {
  const cleanups = cleanupsAfterAll();

  it('completes every document uploaded before a SIGKILL once the service restarts', async () => {
    const data = await tempDir('kb-crash-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: data.path, KB_BOOTSTRAP_KEY: 'false' };
    const created = await createKey(env, { workspace: 'crash', name: 'e2e', permissions: 'read,search,write' });
    expect(created.key).toMatch(/^ink_[0-9A-Za-z]{32,}$/);

    let service = await startChild(['serve'], env);
    cleanups.push(() => stopChild(service, 'SIGKILL'));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const form = new FormData();
      form.append(
        'file',
        new Blob([`# Crash note ${i}\n\nThe lighthouse keeper logged entry number ${i} about amber fog.\n`]),
        `note-${i}.md`,
      );
      const response = await fetch(`${service.url}/api/v1/documents`, {
        method: 'POST',
        headers: { 'X-API-Key': created.key },
        body: form,
      });
      expect(response.status).toBe(201);
      ids.push(((await response.json()) as { document_id: string }).document_id);
    }
    // Kill without any chance to finish: nothing is flushed or committed by a shutdown path.
    await stopChild(service, 'SIGKILL');

    service = await startChild(['serve'], env);
    for (const id of ids) {
      const doc = await waitForDocument(service.url, created.key, id, ['completed', 'failed']);
      expect(doc.status).toBe('completed');
    }
    const search = await fetch(`${service.url}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': created.key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'lighthouse keeper amber fog', limit: 10, mode: 'keyword' }),
    });
    const results = ((await search.json()) as { results: Array<{ document_id: string }> }).results;
    expect(new Set(results.map((r) => r.document_id))).toEqual(new Set(ids));
    await stopChild(service);
  });
});
