import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKey, startChild, stopChild, tempDir, waitForDocument } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

/**
 * `kb serve` killed with SIGKILL mid-upload and mid-ingestion: after a restart, the temporary file
 * of the interrupted upload and the stored file whose version was never recorded are gone, and
 * every document uploaded before the kill completes. Files are counted on disk before and after.
 */

const cleanups = cleanupsAfterAll();

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

/** Opens an upload that sends `head` and then one byte every 200 ms until the socket is destroyed. */
function drippingUpload(url: string, key: string, head: string): net.Socket {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname, () => {
    socket.write(
      'POST /api/v1/documents HTTP/1.1\r\nHost: x\r\n' +
        `X-API-Key: ${key}\r\nContent-Type: multipart/form-data; boundary=XYZ\r\n` +
        'Content-Length: 1000000\r\n\r\n' +
        head,
    );
    const drip = setInterval(() => (socket.writable ? socket.write('a') : clearInterval(drip)), 200);
    socket.on('close', () => clearInterval(drip));
  });
  socket.on('error', () => undefined);
  return socket;
}

const FILE_HEAD = (name: string) =>
  `--XYZ\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`;

describe('leftovers of a crash', () => {
  it('removes the temporary and unreferenced files after a restart, and completes every recorded document', async () => {
    const data = await tempDir('kb-leftovers-');
    cleanups.push(data.remove);
    const objects = path.join(data.path, 'objects');
    const env = {
      KB_DATA_DIR: data.path,
      KB_BOOTSTRAP_KEY: 'false',
      KB_OCR: 'false',
      KB_EMBEDDING_PROVIDER: 'local',
      KB_REQUEST_TIMEOUT_MS: '60000',
    };
    const { key } = await createKey(env, {
      workspace: 'crash',
      name: 'e2e',
      permissions: 'read,write',
      plan: 'enterprise',
    });

    let service = await startChild(['serve'], env);
    cleanups.push(() => stopChild(service, 'SIGKILL'));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const form = new FormData();
      form.append('file', new Blob([`Crash note ${i}: the ferry left the harbour at ${i + 6} o'clock.`]), `n${i}.txt`);
      const res = await fetch(`${service.url}/api/v1/documents`, {
        method: 'POST',
        headers: { 'X-API-Key': key },
        body: form,
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { document_id: string }).document_id);
    }
    // Mid-upload: one upload still streaming its file, one whose file is stored but whose form goes on.
    const sockets = [
      drippingUpload(service.url, key, `${FILE_HEAD('half.txt')}The first half of a file that never ends `),
      drippingUpload(
        service.url,
        key,
        `${FILE_HEAD('whole.txt')}A whole file, then a field that never ends.\r\n--XYZ\r\nContent-Disposition: form-data; name="source"\r\n\r\nslow`,
      ),
    ];
    const deadline = Date.now() + 30_000;
    let before: string[] = [];
    for (;;) {
      before = await filesUnder(objects);
      const temporary = before.filter((f) => f.endsWith('.tmp'));
      const uploads = before.filter((f) => f.includes(`${path.sep}uploads${path.sep}`) && !f.endsWith('.tmp'));
      if (temporary.length >= 1 && uploads.length >= ids.length + 1) break;
      if (Date.now() > deadline) throw new Error(`the uploads did not reach the disk: ${before.join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await stopChild(service, 'SIGKILL');
    for (const socket of sockets) socket.destroy();
    before = await filesUnder(objects);
    expect(before.filter((f) => f.endsWith('.tmp')).length).toBeGreaterThanOrEqual(1);

    // Files older than the request timeout are leftovers: restart with a short one.
    await new Promise((r) => setTimeout(r, 1500));
    service = await startChild(['serve'], { ...env, KB_REQUEST_TIMEOUT_MS: '1000' });
    for (const id of ids) {
      const doc = await waitForDocument(service.url, key, id, ['completed', 'failed']);
      expect(doc.status).toBe('completed');
    }
    const settle = Date.now() + 20_000;
    let after: string[] = [];
    for (;;) {
      after = await filesUnder(objects);
      const uploads = after.filter((f) => f.includes(`${path.sep}uploads${path.sep}`));
      if (!after.some((f) => f.endsWith('.tmp')) && uploads.length === ids.length) break;
      if (Date.now() > settle) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    console.info(`leftovers: ${before.length} files before the restart, ${after.length} after`);
    expect(after.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // One stored upload per recorded document, plus its parsed text and chunk batch.
    expect(after.filter((f) => f.includes(`${path.sep}uploads${path.sep}`))).toHaveLength(ids.length);
    expect(after).toHaveLength(ids.length * 3);
    await stopChild(service);
  }, 180_000);
});
