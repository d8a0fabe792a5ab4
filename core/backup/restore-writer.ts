import { KbError } from '../errors/kb-error.ts';
import type { ApiKeyRecord, AuditEntry, UserRecord } from '../model/account-records.model.ts';
import type { ChunkInput } from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import type { ItemRecord, SourceRecord } from '../ports/source-store/source-store.port.ts';
import type { WebhookEndpoint } from '../ports/webhook-store/webhook-store.port.ts';
import type { DocumentWithVersions } from './backup-cut.ts';
import { type BackupManifest, backupInvalid, base64ToVector, decodeNdjson, type RecordKind } from './backup-format.ts';
import { type BackupStores, forEachLimited, type ProgressListener, phaseProgress } from './backup-parts.ts';
import { readLatestManifest, readVerified, verifyFiles } from './backup-reader.ts';

const CHUNK_BATCH = 500;

export interface RestoreOptions {
  /** Restore into a target that already holds data (records of the same ids are replaced). */
  readonly force?: boolean;
  readonly onProgress?: ProgressListener;
}

interface StoredChunkLine extends Omit<ChunkInput, 'vector'> {
  readonly vector: string | null;
  readonly model: string | null;
}

interface Records {
  documents: DocumentWithVersions[];
  keys: ApiKeyRecord[];
  users: UserRecord[];
  audit: AuditEntry[];
  sources: { source: SourceRecord; items: ItemRecord[] }[];
  webhooks: WebhookEndpoint[];
}

/** The latest backup at `location`, every file checked; rejects `backup-invalid` on any fault. */
export async function loadVerifiedBackup(
  location: ObjectStore,
  what: string,
  onProgress?: ProgressListener,
): Promise<BackupManifest> {
  const manifest = await readLatestManifest(location);
  if (manifest === null) throw backupInvalid(`${what} holds no backup (no backup.json)`);
  const problems = await verifyFiles(location, manifest, onProgress);
  if (problems.length > 0) {
    const shown = problems
      .slice(0, 5)
      .map((p) => `${p.path} (${p.problem === 'missing' ? 'missing' : `wrong ${p.problem}`})`);
    throw backupInvalid(
      `backup ${manifest.id} at ${what} is damaged or incomplete: ${problems.length} file(s) fail the manifest: ` +
        `${shown.join(', ')}${problems.length > shown.length ? ', …' : ''}. Nothing was restored.`,
    );
  }
  return manifest;
}

async function readRecords(location: ObjectStore, manifest: BackupManifest): Promise<Records> {
  const records: Partial<Records> = {};
  for (const entry of manifest.records) {
    const values = decodeNdjson<never>(await readVerified(location, entry), entry.path);
    if (values.length !== entry.count) {
      throw backupInvalid(`${entry.path} holds ${values.length} records; the manifest says ${entry.count}`);
    }
    records[entry.kind as RecordKind] = values;
  }
  const kinds: RecordKind[] = ['documents', 'keys', 'users', 'audit', 'sources', 'webhooks'];
  const absent = kinds.filter((kind) => records[kind] === undefined);
  if (absent.length > 0) throw backupInvalid(`backup ${manifest.id} lacks its ${absent.join(', ')} records`);
  return records as Records;
}

/** What the target holds already (a restore goes into an empty one unless forced). */
async function targetContents(stores: BackupStores): Promise<string[]> {
  const held: string[] = [];
  const workspaces = await stores.documents.listWorkspaces();
  if (workspaces.length > 0) held.push(`documents in ${workspaces.length} workspace(s)`);
  const keys = await stores.accountStore.countKeys();
  if (keys > 0) held.push(`${keys} API key(s)`);
  const users = await stores.accountStore.countUsers();
  if (users > 0) held.push(`${users} account(s)`);
  const sources = await stores.sources.listSources(null);
  if (sources.length > 0) held.push(`${sources.length} source(s)`);
  return held;
}

const ignoreConflict = (force: boolean) => (error: unknown) => {
  if (force && (error as { code?: string }).code === 'conflict') return;
  throw error;
};

/**
 * Restores the latest backup at `location` into `stores`: checks every file first (a damaged or
 * incomplete backup is refused before anything is written), refuses a target that holds data
 * unless `force`, then writes the objects, the documents with their versions, the chunks with
 * their vectors (never embedded again), the accounts, audit log, sources and webhooks.
 */
export async function restoreBackup(
  stores: BackupStores,
  location: ObjectStore,
  what: string,
  options: RestoreOptions = {},
): Promise<BackupManifest> {
  const force = options.force ?? false;
  const manifest = await loadVerifiedBackup(location, what, options.onProgress);
  const records = await readRecords(location, manifest);
  if (!force) {
    const held = await targetContents(stores);
    if (held.length > 0) {
      throw new KbError(
        'restore-target-not-empty',
        `The restore target is not empty: it holds ${held.join(', ')}. Restore into an empty data directory ` +
          '(or fresh engine prefixes), or pass --force to restore over it.',
      );
    }
  }

  const model = manifest.indexModel;
  if (model !== null) {
    const current = await stores.documents.getIndexModel();
    if (current === null || current.model !== model.model || current.dimensions !== model.dimensions) {
      await stores.documents.setIndexModel(model, { replace: current !== null && force });
    }
  }

  const files = phaseProgress(options.onProgress, 'files', manifest.objects.length);
  await forEachLimited(manifest.objects, 8, async (entry) => {
    await stores.objects.put(entry.key, await readVerified(location, entry));
    files.step();
  });

  const documents = phaseProgress(options.onProgress, 'documents', records.documents.length);
  await forEachLimited(records.documents, 4, async ({ document, versions }) => {
    await stores.documents.importDocument(document, versions);
    documents.step();
  });

  const chunks = phaseProgress(options.onProgress, 'chunks', manifest.counts.chunks);
  await forEachLimited(manifest.chunks, 2, async (entry) => {
    const lines = decodeNdjson<StoredChunkLine>(await readVerified(location, entry), entry.path);
    if (lines.length !== entry.count) {
      throw backupInvalid(`${entry.path} holds ${lines.length} chunks; the manifest says ${entry.count}`);
    }
    for (let start = 0; start < lines.length; start += CHUNK_BATCH) {
      const batch = lines.slice(start, start + CHUNK_BATCH);
      const cached = new Map<string, Float32Array>();
      const inputs = batch.map(({ vector, model: vectorModel, ...chunk }): ChunkInput => {
        const kept = vector !== null && model !== null && vectorModel === model.model ? base64ToVector(vector) : null;
        if (kept !== null) cached.set(chunk.contentHash, kept);
        return { ...chunk, vector: kept };
      });
      await stores.documents.importChunks(inputs);
      if (model !== null && cached.size > 0) await stores.documents.putCachedVectors(model.model, cached);
      chunks.step(batch.length);
    }
  });

  await stores.documents.finishImport();

  const accounts = phaseProgress(options.onProgress, 'accounts', 5);
  for (const key of records.keys) await stores.accountStore.createKey(key).catch(ignoreConflict(force));
  for (const user of records.users) await stores.accountStore.createUser(user).catch(ignoreConflict(force));
  accounts.step();
  await forEachLimited(records.audit, 8, (entry) => stores.accountStore.appendAudit(entry));
  accounts.step();
  for (const { source, items } of records.sources) {
    await stores.sources.createSource(source).catch(ignoreConflict(force));
    for (const item of items) await stores.sources.putItem(item);
  }
  accounts.step();
  for (const endpoint of records.webhooks) {
    const existing = await stores.webhooks.getEndpoint(endpoint.workspaceId, endpoint.id);
    if (existing === null) await stores.webhooks.createEndpoint(endpoint);
    else if (force) await stores.webhooks.updateEndpoint(endpoint);
  }
  accounts.step();
  return manifest;
}
