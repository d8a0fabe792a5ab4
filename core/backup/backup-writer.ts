import { randomUUID } from 'node:crypto';
import type { AuditEntry } from '../model/account-records.model.ts';
import type { VersionRecord } from '../model/document-records.model.ts';
import type { DocumentSnapshot } from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { cutDocument, type DocumentWithVersions } from './backup-cut.ts';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupCounts,
  type BackupManifest,
  type BackupPointer,
  type ChunkFileEntry,
  chunksKey,
  encodeNdjson,
  fileKey,
  manifestKey,
  type ObjectEntry,
  POINTER_KEY,
  type RecordFileEntry,
  type RecordKind,
  recordsKey,
  sha256,
  vectorToBase64,
} from './backup-format.ts';
import { type BackupStores, forEachLimited, type ProgressListener, phaseProgress } from './backup-parts.ts';
import { readLatestManifest } from './backup-reader.ts';

const DOCUMENT_PAGE = 500;
const AUDIT_PAGE = 1000;
const PARALLEL = 8;

export interface BackupOptions {
  readonly runtime: string;
  readonly onProgress?: ProgressListener;
}

/** Whether a version's chunks belong in a backup: completed and not archived. */
function holdsChunks(version: VersionRecord): boolean {
  return version.status === 'completed' && version.archivedAt === null && version.chunkCount > 0;
}

/** Which state of a version its chunks are: a later backup reuses the chunk file of the same identity. */
function chunkIdentity(version: VersionRecord, model: string | null): string {
  return sha256(
    JSON.stringify([
      version.documentId,
      version.version,
      version.completedAt,
      version.chunkCount,
      version.embeddingModel,
      version.archivedAt,
      model,
    ]),
  );
}

/**
 * Takes a backup of `stores` into `location`. The documents, versions and chunks are read from one
 * {@link DocumentSnapshot} (see its contract for what "one instant" means per store); the other
 * stores are read after it, and audit entries of versions the snapshot does not hold are left out.
 */
export async function writeBackup(
  stores: BackupStores,
  location: ObjectStore,
  options: BackupOptions,
): Promise<BackupManifest> {
  const startedAt = new Date().toISOString();
  const id = `${startedAt.replace(/[-:.]/g, '').replace('T', '-').slice(0, 15)}-${randomUUID().slice(0, 8)}`;
  const previous = await readLatestManifest(location).catch(() => null);
  const written = { files: 0, bytes: 0 };
  const counts: BackupCounts = {
    documents: 0,
    versions: 0,
    chunks: 0,
    vectors: 0,
    objects: 0,
    keys: 0,
    users: 0,
    audit: 0,
    sources: 0,
    sourceItems: 0,
    webhooks: 0,
  };

  /** Writes `bytes` under `key` unless a file of that name (content-addressed) is there already. */
  async function putOnce(key: string, bytes: Buffer): Promise<void> {
    const existing = await location.stat(key);
    if (existing !== null && existing.size === bytes.length) return;
    await location.put(key, bytes);
    written.files += 1;
    written.bytes += bytes.length;
  }

  async function putRecords(kind: RecordKind, values: readonly unknown[]): Promise<RecordFileEntry> {
    const bytes = encodeNdjson(values);
    const path = recordsKey(id, kind);
    await location.put(path, bytes);
    written.files += 1;
    written.bytes += bytes.length;
    return { kind, path, sha256: sha256(bytes), bytes: bytes.length, count: values.length };
  }

  const snapshot: DocumentSnapshot = await stores.documents.openSnapshot();
  const documents: DocumentWithVersions[] = [];
  const chunkEntries: ChunkFileEntry[] = [];
  try {
    const listing = phaseProgress(options.onProgress, 'documents', 0);
    for (let after = ''; ; ) {
      const page = await snapshot.documents(after, DOCUMENT_PAGE);
      for (const entry of page) {
        const cut = cutDocument(entry, snapshot.at, snapshot.exact);
        if (cut !== null) documents.push(cut);
      }
      listing.step(page.length);
      if (page.length < DOCUMENT_PAGE) break;
      after = page[page.length - 1]!.document.id;
    }

    const model = snapshot.indexModel?.model ?? null;
    const previousChunks = new Map((previous?.chunks ?? []).map((entry) => [entry.identity, entry]));
    const withChunks = documents.flatMap((d) => d.versions.filter(holdsChunks));
    const chunking = phaseProgress(options.onProgress, 'chunks', withChunks.length);
    await forEachLimited(withChunks, PARALLEL, async (version) => {
      const identity = chunkIdentity(version, model);
      const known = previousChunks.get(identity);
      if (known !== undefined && (await location.stat(known.path))?.size === known.bytes) {
        chunkEntries.push(known);
      } else {
        const chunks = await snapshot.chunks(version.documentId, version.version);
        const bytes = encodeNdjson(
          chunks.map(({ vector, ...chunk }) => ({ ...chunk, vector: vector === null ? null : vectorToBase64(vector) })),
          'huffman',
        );
        const hash = sha256(bytes);
        await putOnce(chunksKey(hash), bytes);
        chunkEntries.push({
          path: chunksKey(hash),
          sha256: hash,
          bytes: bytes.length,
          documentId: version.documentId,
          version: version.version,
          identity,
          count: chunks.length,
          vectors: chunks.filter((chunk) => chunk.vector !== null).length,
        });
      }
      chunking.step();
    });
  } finally {
    await snapshot.close();
  }
  chunkEntries.sort((a, b) =>
    a.documentId === b.documentId ? a.version - b.version : a.documentId < b.documentId ? -1 : 1,
  );
  for (const entry of chunkEntries) {
    counts.chunks += entry.count;
    counts.vectors += entry.vectors;
  }

  const { entries: objects, missing } = await copyObjects(
    stores.objects,
    location,
    documents,
    previous?.objects ?? [],
    options,
    putOnce,
  );

  const versionKeys = new Set<string>();
  for (const { document, versions } of documents) {
    counts.documents += 1;
    counts.versions += versions.length;
    for (const v of versions) versionKeys.add(`${document.id}:${v.version}`);
  }
  counts.objects = objects.length;

  const accounts = phaseProgress(options.onProgress, 'accounts', 4);
  const keys = await stores.accountStore.listKeys();
  const users = await stores.accountStore.listUsers();
  const sources = await stores.sources.listSources(null);
  const workspaces = new Set<string>([
    ...documents.map((d) => d.document.workspaceId),
    ...keys.map((k) => k.workspaceId),
    ...users.flatMap((u) => u.workspaceIds),
    ...sources.map((s) => s.workspaceId),
  ]);
  accounts.step();
  const audit: AuditEntry[] = [];
  for (const workspaceId of [...workspaces].sort()) {
    for (let afterId: string | undefined; ; ) {
      const { entries } = await stores.accountStore.listAudit({
        workspaceId,
        order: 'asc',
        limit: AUDIT_PAGE,
        ...(afterId === undefined ? {} : { afterId }),
      });
      for (const entry of entries) {
        if (entry.timestamp > snapshot.at) continue;
        const versionWrite = entry.action === 'create' || entry.action === 'update' || entry.action === 'rollback';
        if (versionWrite && entry.version !== null && !versionKeys.has(`${entry.documentId}:${entry.version}`))
          continue;
        audit.push(entry);
      }
      if (entries.length < AUDIT_PAGE) break;
      afterId = entries[entries.length - 1]!.id;
    }
  }
  accounts.step();
  const sourceLines = [];
  for (const source of sources) {
    const items = await stores.sources.listItems(source.id);
    counts.sourceItems += items.length;
    sourceLines.push({ source, items });
  }
  const webhooks = [];
  for (const workspaceId of [...workspaces].sort())
    webhooks.push(...(await stores.webhooks.listEndpoints(workspaceId)));
  accounts.step();
  Object.assign(counts, {
    keys: keys.length,
    users: users.length,
    audit: audit.length,
    sources: sources.length,
    webhooks: webhooks.length,
  });

  const records: RecordFileEntry[] = [
    await putRecords('documents', documents),
    await putRecords('keys', keys),
    await putRecords('users', users),
    await putRecords('audit', audit),
    await putRecords('sources', sourceLines),
    await putRecords('webhooks', webhooks),
  ];
  accounts.step();

  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    id,
    at: snapshot.at,
    exact: snapshot.exact,
    runtime: options.runtime,
    startedAt,
    finishedAt: new Date().toISOString(),
    previous: previous?.id ?? null,
    indexModel: snapshot.indexModel,
    counts,
    written,
    records,
    chunks: chunkEntries,
    objects,
    missingObjects: missing,
  };
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`, 'utf8');
  await location.put(manifestKey(id), manifestBytes);
  const pointer: BackupPointer = { format: BACKUP_FORMAT, latest: id, manifestSha256: sha256(manifestBytes) };
  await location.put(POINTER_KEY, `${JSON.stringify(pointer, null, 1)}\n`);
  return manifest;
}

/**
 * Copies the objects the backed-up versions need (each version's file, and the parsed text of a
 * completed one), named by their hash; an object a previous backup holds under the same key is
 * not read again (stored objects never change under their key).
 */
async function copyObjects(
  objects: ObjectStore,
  location: ObjectStore,
  documents: readonly DocumentWithVersions[],
  previous: readonly ObjectEntry[],
  options: BackupOptions,
  putOnce: (key: string, bytes: Buffer) => Promise<void>,
): Promise<{ entries: ObjectEntry[]; missing: string[] }> {
  const wanted = new Map<string, { optional: boolean }>();
  for (const { versions } of documents) {
    for (const v of versions) {
      wanted.set(v.storageKey, { optional: false });
      if (v.status === 'completed') {
        wanted.set(storageKeys.parsed(v.workspaceId, v.documentId, v.version), { optional: true });
      }
    }
  }
  const known = new Map(previous.map((entry) => [entry.key, entry]));
  const entries: ObjectEntry[] = [];
  const missing: string[] = [];
  const keys = [...wanted.keys()].sort();
  const progress = phaseProgress(options.onProgress, 'files', keys.length);
  await forEachLimited(keys, PARALLEL, async (key) => {
    const reuse = known.get(key);
    if (reuse !== undefined && (await location.stat(reuse.path))?.size === reuse.bytes) {
      entries.push(reuse);
    } else {
      let bytes: Buffer | null = null;
      try {
        bytes = await objects.getBuffer(key);
      } catch (error) {
        // A parsed text the version never had, or a file purged with its document meanwhile.
        if ((error as { code?: string }).code !== 'not-found') throw error;
      }
      if (bytes === null && wanted.get(key)?.optional === false) missing.push(key);
      if (bytes !== null) {
        const hash = sha256(bytes);
        await putOnce(fileKey(hash), bytes);
        entries.push({ key, path: fileKey(hash), sha256: hash, bytes: bytes.length });
      }
    }
    progress.step();
  });
  return { entries: entries.sort((a, b) => (a.key < b.key ? -1 : 1)), missing: missing.sort() };
}
