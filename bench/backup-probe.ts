/**
 * Backup and restore of an embedded knowledge base of N chunks (default 100,000) seeded through the
 * ports with random unit vectors (nothing is embedded): the time and bytes of a first and a second
 * (incremental) backup, of a restore, and of `cp -r` of the stopped data directory as the anchor.
 * `node --import tsx bench/backup-probe.ts [chunks] [workdir]`.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBackupService } from '../core/backup/backup.service.ts';
import { openBackupLocation } from '../core/backup/backup-location.ts';
import { loadConfig } from '../core/config/config.ts';
import { silentLogger } from '../core/model/logger.model.ts';
import { createRuntime } from '../core/runtime/runtime.ts';

const total = Number(process.argv[2] ?? 100_000);
const work = process.argv[3] ?? (await mkdtemp(path.join(os.tmpdir(), 'kb-backup-bench-')));
const PER_DOC = 100;
const DIMENSIONS = 384;

function unitVector(): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    v[i] = Math.random() - 0.5;
    norm += v[i]! * v[i]!;
  }
  for (let i = 0; i < DIMENSIONS; i++) v[i]! /= Math.sqrt(norm);
  return v;
}

async function service(dataDir: string) {
  const config = loadConfig({ KB_DATA_DIR: dataDir, KB_VECTOR_INDEX: 'false', KB_KEYWORD_INDEX: 'false' });
  const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
  const { documents, objects, accountStore, sources, webhooks } = runtime.ports;
  const backups = createBackupService({
    stores: { documents, objects, accountStore, sources, webhooks },
    runtime: 'embedded',
    openLocation: (location, purpose) => openBackupLocation(location, purpose, config),
  });
  return { runtime, backups };
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const du = (dir: string) => Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);

const source = path.join(work, 'source');
const seed = await service(source);
const store = seed.runtime.ports.documents;
await store.setIndexModel({ model: 'bench-random', dimensions: DIMENSIONS });
const words = 'glacier volcano harbour bakery river mountain forest desert island valley'.split(' ');
const seedStart = process.hrtime.bigint();
for (let d = 0; d < total / PER_DOC; d++) {
  const id = randomUUID();
  const text = Array.from({ length: PER_DOC }, (_, i) => `${words[(d + i) % words.length]} passage ${d}-${i}`);
  const key = `workspaces/bench/documents/${id}/uploads/${randomUUID()}`;
  await seed.runtime.ports.objects.put(key, Buffer.from(text.join('\n')));
  const now = new Date().toISOString();
  await store.createDocument({
    id,
    workspaceId: 'bench',
    source: 'api',
    firstVersion: {
      name: `doc-${d}.txt`,
      mimeType: 'text/plain',
      sizeBytes: text.join('\n').length,
      contentHash: '0'.repeat(64),
      storageKey: key,
      metadata: { d },
      changeReason: null,
      restoredFrom: null,
      createdBy: 'bench',
      createdAt: now,
    },
  });
  await store.completeVersionWithChunks(
    id,
    1,
    text.map((content, index) => ({
      id: `${id}:1:${index}`,
      documentId: id,
      workspaceId: 'bench',
      version: 1,
      index,
      content,
      contentHash: randomUUID().replace(/-/g, '').padEnd(64, '0'),
      tokens: 4,
      startOffset: 0,
      endOffset: content.length,
      page: null,
      metadata: {},
      vector: unitVector(),
    })),
    { at: now, chunkCount: PER_DOC, tokens: 4 * PER_DOC, embeddingModel: 'bench-random' },
  );
}
console.log(`seeded ${total} chunks in ${seconds(seedStart).toFixed(1)} s`);

const dest = path.join(work, 'backups');
let start = process.hrtime.bigint();
const first = await seed.backups.backup(dest);
const firstSeconds = seconds(start);
start = process.hrtime.bigint();
const second = await seed.backups.backup(dest);
const secondSeconds = seconds(start);
await seed.runtime.close();

start = process.hrtime.bigint();
execFileSync('cp', ['-r', source, path.join(work, 'copy')]);
const cpSeconds = seconds(start);

const target = path.join(work, 'restored');
const restored = await service(target);
start = process.hrtime.bigint();
await restored.backups.restore(dest);
const restoreSeconds = seconds(start);
await restored.runtime.close();

const result = {
  chunks: total,
  data_dir_bytes: du(source),
  first: { seconds: firstSeconds, bytes: first.written.bytes, files: first.written.files },
  second: { seconds: secondSeconds, bytes: second.written.bytes, files: second.written.files },
  second_vs_first: { time: secondSeconds / firstSeconds, bytes: second.written.bytes / first.written.bytes },
  restore_seconds: restoreSeconds,
  cp_r_seconds: cpSeconds,
  restore_vs_cp: restoreSeconds / cpSeconds,
  backup_vs_cp: firstSeconds / cpSeconds,
};
console.log(JSON.stringify(result, null, 1));
if (process.argv[3] === undefined) await rm(work, { recursive: true, force: true });
