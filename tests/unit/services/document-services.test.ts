/**
 * The document services on real embedded stores (SQLite, a directory of files) and a message log
 * that records what is published: what each write leaves behind, what a failed write cleans up,
 * and the refusals of reads of what is not there or not ready.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { topicNames } from '../../../core/events/events.ts';
import type { AccountStore } from '../../../core/ports/account-store/account-store.port.ts';
import { createSqliteAccountStore } from '../../../core/ports/account-store/sqlite.adapter.ts';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../../core/ports/document-store/sqlite.adapter.ts';
import type { MessageLog, OutgoingMessage } from '../../../core/ports/message-log/message-log.port.ts';
import { createFilesystemObjectStore } from '../../../core/ports/object-store/filesystem.adapter.ts';
import type { ObjectStore } from '../../../core/ports/object-store/object-store.port.ts';
import { createChunksService } from '../../../core/services/chunks.service.ts';
import { createDocumentWritesService } from '../../../core/services/document-writes.service.ts';
import { createDocumentsService } from '../../../core/services/documents.service.ts';
import { createReindexService } from '../../../core/services/reindex.service.ts';
import type { RequestContext } from '../../../core/services/request-context.ts';
import { createRetentionService } from '../../../core/services/retention.service.ts';
import { createUploadStagingService } from '../../../core/services/upload-staging.service.ts';
import { createVersionsService } from '../../../core/services/versions.service.ts';

const ctx: RequestContext = { workspaceId: 'ws', keyId: 'key-1', traceId: 'trace-1' };
const topics = topicNames('kb.');

let dir: string;
let documents: DocumentStore;
let accountStore: AccountStore;
let objects: ObjectStore;
let published: { topic: string; messages: readonly OutgoingMessage[] }[];
let publishFails: boolean;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-document-services-'));
  documents = createSqliteDocumentStore({ file: path.join(dir, 'documents.db') });
  accountStore = createSqliteAccountStore({ file: path.join(dir, 'control.db') });
  objects = createFilesystemObjectStore({ root: path.join(dir, 'objects') });
  published = [];
  publishFails = false;
});

afterEach(async () => {
  await documents.close();
  await accountStore.close();
  await objects.close();
  await rm(dir, { recursive: true, force: true });
});

const log = () =>
  ({
    async publish(topic: string, messages: readonly OutgoingMessage[]) {
      if (publishFails) throw new Error('the log is down');
      published.push({ topic, messages });
    },
  }) as unknown as MessageLog;

const services = () => {
  const deps = { documents, objects, accountStore, log: log(), topics };
  return {
    uploads: createUploadStagingService({ objects, maxUploadBytes: 64 }),
    documents: createDocumentsService({ documents, objects }),
    writes: createDocumentWritesService(deps),
    versions: createVersionsService(deps),
    chunks: createChunksService({ documents, objects }),
  };
};

const stored = async (prefix = '') => {
  const keys: string[] = [];
  for await (const key of objects.list(prefix)) keys.push(key);
  return keys;
};

const audited = async (documentId: string) =>
  (await accountStore.listAudit({ workspaceId: 'ws', documentId, limit: 100 })).entries.map((e) => e.action);

const stage = (text: string, documentId?: string) =>
  services().uploads.stage({
    workspaceId: 'ws',
    ...(documentId ? { documentId } : {}),
    stream: Readable.from([Buffer.from(text)]),
    filename: 'note.txt',
    declaredType: 'text/plain',
  });

describe('upload staging', () => {
  it('stores the file with its size, SHA-256 and sniffed type', async () => {
    const staged = await stage('hello world');
    expect(staged).toMatchObject({
      sizeBytes: 11,
      contentHash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
      mimeType: 'text/plain',
      name: 'note.txt',
    });
    expect(await stored()).toEqual([staged.storageKey]);
    await services().uploads.discard(staged);
    expect(await stored()).toEqual([]);
  });

  it('refuses an empty file and one over the limit, leaving nothing stored', async () => {
    await expect(stage('')).rejects.toMatchObject({ code: 'empty-file' });
    await expect(stage('x'.repeat(65))).rejects.toMatchObject({
      code: 'payload-too-large',
      message: 'The file is 65 bytes; the limit is 64 bytes.',
    });
    expect(await stored()).toEqual([]);
  });
});

describe('document writes', () => {
  it('creates version 1, publishes its uploaded event and audits the creation', async () => {
    const s = services();
    const staged = await stage('first text');
    const view = await s.writes.create(ctx, { staged, metadata: { a: 1 }, source: 'upload', changeReason: null });
    expect(view).toMatchObject({ document_id: staged.documentId, version: 1, status: 'pending' });
    expect(published).toHaveLength(1);
    expect(published[0]?.topic).toBe(topics.uploaded);
    expect(published[0]?.messages[0]?.value).toMatchObject({ document_id: staged.documentId, version: 1 });
    expect(await audited(staged.documentId)).toEqual(['create']);
    expect((await s.documents.get(ctx, staged.documentId)).version).toBe(1);
  });

  it('leaves nothing behind when the uploaded event cannot be published', async () => {
    const s = services();
    const staged = await stage('never published');
    publishFails = true;
    await expect(s.writes.create(ctx, { staged, metadata: {}, source: 'upload', changeReason: null })).rejects.toThrow(
      'the log is down',
    );
    expect(await stored()).toEqual([]);
    await expect(s.documents.get(ctx, staged.documentId)).rejects.toMatchObject({ code: 'not-found' });
  });

  it('appends version 2 for new content, keeping the metadata when none is given', async () => {
    const s = services();
    const first = await stage('first text');
    await s.writes.create(ctx, { staged: first, metadata: { a: 1 }, source: 'upload', changeReason: null });
    const second = await stage('second text', first.documentId);
    const view = await s.writes.replaceContent(ctx, first.documentId, { staged: second, changeReason: 'edit' });
    expect(view).toMatchObject({ version: 2, metadata: { a: 1 } });
    expect(published.map((p) => p.messages[0]?.value.version)).toEqual([1, 2]);
    expect(await audited(first.documentId)).toEqual(['create', 'update']);
  });

  it('keeps the file of a new version recorded before its event could not be published', async () => {
    const s = services();
    const first = await stage('first text');
    await s.writes.create(ctx, { staged: first, metadata: {}, source: 'upload', changeReason: null });
    const second = await stage('second text', first.documentId);
    publishFails = true;
    await expect(
      s.writes.replaceContent(ctx, first.documentId, { staged: second, changeReason: null }),
    ).rejects.toThrow('the log is down');
    // Version 2 is recorded and pending: its file stays for the check that queues it again.
    expect((await documents.getVersion(first.documentId, 2))?.status).toBe('pending');
    expect(await stored()).toContain(second.storageKey);
  });

  it('discards the staged file when the new content is for an unknown document', async () => {
    const staged = await stage('orphan text', '0190a3b4-0000-7000-8000-000000000000');
    await expect(
      services().writes.replaceContent(ctx, staged.documentId, { staged, changeReason: null }),
    ).rejects.toMatchObject({ code: 'not-found' });
    expect(await stored()).toEqual([]);
  });

  it('re-ingests a metadata change of a version that is not completed, and deletes', async () => {
    const s = services();
    const staged = await stage('first text');
    await s.writes.create(ctx, { staged, metadata: {}, source: 'upload', changeReason: null });
    const view = await s.writes.patchMetadata(ctx, staged.documentId, { metadata: { b: 2 }, changeReason: null });
    expect(view).toMatchObject({ version: 2, metadata: { b: 2 } });
    expect(published).toHaveLength(2);
    await s.writes.remove(ctx, staged.documentId, { purge: false });
    await expect(s.documents.get(ctx, staged.documentId)).rejects.toMatchObject({ code: 'not-found' });
    expect(await audited(staged.documentId)).toEqual(['create', 'update', 'delete']);
  });
});

describe('versions, chunks and context', () => {
  it('rolls back by appending a version with the target content, and refuses the current version', async () => {
    const s = services();
    const first = await stage('first text');
    await s.writes.create(ctx, { staged: first, metadata: { v: 1 }, source: 'upload', changeReason: null });
    const second = await stage('second text', first.documentId);
    await s.writes.replaceContent(ctx, first.documentId, { staged: second, metadata: { v: 2 }, changeReason: null });
    await expect(s.versions.rollback(ctx, first.documentId, 2)).rejects.toMatchObject({ code: 'conflict' });
    const rolled = await s.versions.rollback(ctx, first.documentId, 1);
    expect(rolled).toMatchObject({ version: 3, restored_from: 1 });
    const history = await s.versions.history(ctx, first.documentId);
    expect(history.versions.map((v) => v.version).sort()).toEqual([1, 2, 3]);
    expect(await s.versions.version(ctx, first.documentId, 3)).toMatchObject({
      metadata: { v: 1 },
      content_hash: first.contentHash,
    });
    await expect(s.versions.compare(ctx, first.documentId, 1, 3)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('answers not-found for an unknown document and conflict for the text of a pending version', async () => {
    const s = services();
    await expect(s.chunks.chunks(ctx, 'not-a-uuid', { limit: 10 })).rejects.toMatchObject({ code: 'not-found' });
    const staged = await stage('first text');
    await s.writes.create(ctx, { staged, metadata: {}, source: 'upload', changeReason: null });
    await expect(s.chunks.context(ctx, staged.documentId, { window: 1 })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(await s.chunks.chunks(ctx, staged.documentId, { limit: 10 })).toMatchObject({
      chunks: [],
      pagination: { has_more: false, total: 0 },
    });
  });
});

describe('reindex and retention services', () => {
  it('report an empty index and archive nothing in an empty store', async () => {
    const reindex = createReindexService({
      documents,
      getEmbeddings: () => Promise.reject(new Error('not loaded until a run')),
      batchSize: 8,
    });
    expect(await reindex.indexModel()).toBeNull();
    expect(await createRetentionService({ documents, accountStore }).run()).toEqual([]);
  });
});
