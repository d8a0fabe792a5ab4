import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSourceSyncService } from '../../core/services/source-sync.service.ts';
import type { SourceReader } from '../../core/sources/source-reader.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { page, syncAndWait, writeFiles } from '../support/source-client.ts';
import { type SwapWatch, swapOnOpen, swapOnOpenUnsupported } from '../support/swap-on-open.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * Folder sources as a hostile workspace sees them: roots granted per workspace, one answer for
 * every path outside them (a key cannot probe the server's files), and files swapped for a
 * symlink, a FIFO or a device while a run reads them (the run ends, nothing outside is read, the
 * service stays live).
 */
let svc: TestApp;
let base: string;
let rootA: string;
let rootB: string;
let shared: string;
const keys = { a: '', b: '' };
const SECRET_WORD = 'zanzibarite';
let secretFile: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kb-folder-security-'));
  rootA = path.join(base, 'a');
  rootB = path.join(base, 'b');
  shared = path.join(base, 'shared');
  for (const dir of [rootA, rootB, shared]) await mkdir(path.join(dir, 'docs'), { recursive: true });
  await writeFiles(path.join(rootA, 'docs'), { 'a.md': page('alder') });
  await writeFiles(path.join(rootB, 'docs'), { 'b.md': page('birch') });
  await writeFile(path.join(rootB, 'file.md'), page('beech'));
  secretFile = path.join(base, 'secret.env');
  await writeFile(secretFile, `DATABASE_PASSWORD=${SECRET_WORD}\n`, { mode: 0o600 });
  svc = await buildTestApp({
    stages: 'all',
    env: { KB_SOURCE_FOLDER_ROOTS: `team-a=${rootA}:team-b=${rootB}:*=${shared}` },
  });
  keys.a = (await svc.createKey({ permissions: ['read', 'search', 'write'], workspaceId: 'team-a' })).key;
  keys.b = (await svc.createKey({ permissions: ['read', 'search', 'write'], workspaceId: 'team-b' })).key;
});
afterAll(async () => {
  await svc?.close();
  await rm(base, { recursive: true, force: true });
});

const create = (key: string, folder: string, name = `n-${uuidv7()}`) =>
  svc.request('POST', '/api/v1/sources', { key, json: { name, kind: 'folder', path: folder } });

describe('roots granted per workspace', () => {
  it("lets a workspace use its own roots and the shared ones, never another workspace's", async () => {
    expect((await create(keys.a, path.join(rootA, 'docs'))).status).toBe(201);
    expect((await create(keys.a, path.join(shared, 'docs'))).status).toBe(201);
    expect((await create(keys.b, path.join(rootB, 'docs'))).status).toBe(201);
    const refused = expectProblem(await create(keys.b, path.join(rootA, 'docs')), 422, 'validation-error');
    expect(refused.errors?.[0]?.field).toBe('path');
    // A workspace granted no root of its own has the shared ones only.
    expectProblem(await create(svc.keys.all, path.join(rootA, 'docs')), 422, 'validation-error');
    expect((await create(svc.keys.all, path.join(shared, 'docs'))).status).toBe(201);
  });

  it("refuses a change of path to another workspace's root", async () => {
    const made = await create(keys.a, path.join(rootA, 'docs'));
    expect(made.status).toBe(201);
    const res = await svc.request('PATCH', `/api/v1/sources/${made.body.id}`, {
      key: keys.a,
      json: { path: path.join(rootB, 'docs') },
    });
    expectProblem(res, 422, 'validation-error');
    expect((await svc.request('GET', `/api/v1/sources/${made.body.id}`, { key: keys.a })).body.path).toBe(
      path.join(rootA, 'docs'),
    );
  });

  it("fails at run time a source whose folder is in another workspace's root (path-refused), reading nothing", async () => {
    // A source stored before its workspace lost the grant: the roots are checked again at every run.
    const now = new Date().toISOString();
    const stored = await svc.runtime.ports.sources.createSource({
      id: uuidv7(),
      workspaceId: 'team-b',
      name: 'moved-away',
      kind: 'folder',
      location: { path: path.join(rootA, 'docs') },
      include: [],
      exclude: [],
      metadata: {},
      schedule: null,
      createdAt: now,
      updatedAt: now,
    });
    const run = await syncAndWait(svc, stored.id, { key: keys.b });
    expect(run.status).toBe('failed');
    expect(run.errors[0]).toMatchObject({ item: null, code: 'path-refused' });
    expect(run.counts.created).toBe(0);
    const docs = await svc.request('GET', '/api/v1/documents?source=moved-away', { key: keys.b });
    expect(docs.body.documents).toEqual([]);
  });
});

describe('one answer for every path outside the roots', () => {
  it('answers the same 422 whether the path exists or not, is a file or a directory, or leads out through a symlink', async () => {
    await symlink(path.join(rootB, 'docs'), path.join(rootA, 'to-b'));
    await symlink(path.join(rootB, 'nowhere'), path.join(rootA, 'to-nowhere'));
    const attempts = [
      path.join(rootB, 'docs'), // another workspace's directory
      path.join(rootB, 'missing'), // a missing one beside it
      path.join(rootB, 'file.md'), // a file
      '/etc', // a directory of the server
      '/etc/passwd',
      `/no-such-dir-${uuidv7()}`,
      path.join(rootA, 'to-b'), // through a symlink in the workspace's own root
      path.join(rootA, 'to-b', 'missing'),
      path.join(rootA, 'to-nowhere'),
    ];
    const answers = [];
    for (const attempt of attempts) {
      const problem = expectProblem(await create(keys.a, attempt, 'probe'), 422, 'validation-error');
      const { trace_id: _trace, timestamp: _at, ...rest } = problem as typeof problem & { timestamp: string };
      answers.push(rest);
    }
    expect(answers[0]).toMatchObject({
      errors: [{ field: 'path' }],
      detail: expect.stringContaining('KB_SOURCE_FOLDER_ROOTS'),
    });
    for (const [i, answer] of answers.entries()) expect(answer, attempts[i]).toEqual(answers[0]);
  });
});

const unsupported = swapOnOpenUnsupported();

describe.skipIf(unsupported !== null)(
  `files swapped while a run reads them${unsupported ? ` (skipped: ${unsupported})` : ''}`,
  () => {
    const watches: SwapWatch[] = [];
    afterAll(() => {
      for (const watch of watches) watch.stop();
    });

    it('never reads through a swapped file, never hangs on a FIFO or a device, and the run ends', async () => {
      const folder = path.join(shared, 'swapped');
      const at = (name: string) => path.join(folder, name);
      await writeFiles(folder, {
        '01-self-secret.md': page('anemone'),
        '02-self-fifo.md': page('bluebell'),
        '03-self-zero.md': page('campion'),
        '05-next-secret.md': page('dahlia'),
        '06-next-fifo.md': page('eyebright'),
        '07-next-zero.md': page('foxglove'),
        '08-plain.md': page('gentian'),
      });
      // The trigger of the later swaps: a large file no parser takes (a failing item), whose
      // reading leaves the swaps ample time to land before the next items are opened.
      await writeFile(
        at('04-trigger.png'),
        Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(8 << 20)]),
      );
      const created = await create(svc.keys.all, folder, 'swapped');
      expect(created.status).toBe(201);

      // Each file replaced right after its first open (a symlink to a secret, a FIFO, /dev/zero)...
      watches.push(
        await swapOnOpen(at('01-self-secret.md'), [{ victim: at('01-self-secret.md'), by: { symlinkTo: secretFile } }]),
      );
      watches.push(await swapOnOpen(at('02-self-fifo.md'), [{ victim: at('02-self-fifo.md'), by: 'fifo' }]));
      watches.push(
        await swapOnOpen(at('03-self-zero.md'), [{ victim: at('03-self-zero.md'), by: { symlinkTo: '/dev/zero' } }]),
      );
      // ...and the next files replaced before they are opened.
      watches.push(
        await swapOnOpen(at('04-trigger.png'), [
          { victim: at('05-next-secret.md'), by: { symlinkTo: secretFile } },
          { victim: at('06-next-fifo.md'), by: 'fifo' },
          { victim: at('07-next-zero.md'), by: { symlinkTo: '/dev/zero' } },
        ]),
      );

      const run = await syncAndWait(svc, created.body.id, { timeoutMs: 30_000 });
      for (const watch of watches) expect(await watch.swapped).toBe(true);
      expect(run.status).toBe('completed');
      expect(run.counts).toMatchObject({ seen: 8, created: 4, failed: 4 });
      const failures = Object.fromEntries(run.errors.map((e) => [e.item, e.code]));
      expect(failures).toEqual({
        '04-trigger.png': 'unsupported-type',
        '05-next-secret.md': 'path-refused',
        '06-next-fifo.md': 'path-refused',
        '07-next-zero.md': 'path-refused',
      });

      // The files swapped after their open were read as they were when opened.
      const docs = (await svc.request('GET', '/api/v1/documents?source=swapped&limit=100')).body.documents as Array<{
        document_id: string;
        source_item: string;
      }>;
      expect(docs.map((d) => d.source_item).sort()).toEqual([
        '01-self-secret.md',
        '02-self-fifo.md',
        '03-self-zero.md',
        '08-plain.md',
      ]);
      for (const doc of docs) await svc.waitForStatus(doc.document_id, 'completed');
      for (const word of ['anemone', 'bluebell', 'campion', 'gentian', SECRET_WORD]) {
        const res = await svc.request('POST', '/api/v1/search', { json: { query: word, mode: 'keyword', limit: 5 } });
        const found = (res.body.results as Array<{ content: string }>).some((r) => r.content.includes(word));
        expect(found, word).toBe(word !== SECRET_WORD);
      }
      // Nothing stored holds the secret.
      for (const object of await svc.storedObjects()) {
        expect((await readFile(path.join(svc.dataDir, 'objects', object))).includes(SECRET_WORD), object).toBe(false);
      }

      // The service is live and takes uploads.
      expect((await svc.request('GET', '/health/ready', { key: null })).status).toBe(200);
      const up = await svc.upload('after.md', page('heather'));
      expect(up.status).toBe(201);
    });
  },
);

describe('a run when the service stops', () => {
  it('ends the read under way at once and leaves the run to be resumed, the item not failed', async () => {
    // A read that never ends by itself (a file system that stopped answering).
    let reading!: () => void;
    const started = new Promise<void>((resolve) => {
      reading = resolve;
    });
    let closes = 0;
    const hung: SourceReader = {
      async *list() {
        yield { key: 'hung.md', sizeBytes: 10, mtimeMs: 1, etag: null, lastModified: null };
      },
      async read() {
        const stream = new Readable({
          read() {
            reading();
          },
        });
        return {
          open: () => stream,
          close: () => {
            closes++;
            stream.destroy(new Error('closed'));
          },
        };
      },
    };
    const rt = svc.runtime;
    const sync = createSourceSyncService({
      store: rt.ports.sources,
      documents: rt.ports.documents,
      documentWrites: rt.services.documentWrites,
      uploads: rt.services.uploads,
      readerFor: () => hung,
      maxUploadBytes: rt.config.maxUploadBytes,
      maxDeleteFraction: 0.5,
      heartbeatMs: 1000,
      staleMs: 60_000,
      logger: rt.logger,
    });
    const made = await create(svc.keys.all, path.join(shared, 'docs'), 'hung');
    const source = await rt.ports.sources.getSource(svc.workspaceId, made.body.id);
    if (!source) throw new Error('source not stored');
    const run = await sync.start(source, { allowMassDelete: false });
    await started;
    await sync.close();
    expect(closes).toBeGreaterThanOrEqual(1);
    const left = await rt.ports.sources.getRun(source.id, run.id);
    expect(left).toMatchObject({ status: 'running', counts: { failed: 0, created: 0 } });
  });
});
