/**
 * The notification outbox on the embedded document store (SQLite) and a message log that records
 * what is published or refuses it: what a delivery the log refused leaves for a drain, that a drain
 * publishes it under the id it was recorded with and then clears it, and that one unreadable entry
 * does not hold back the others.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { documentNotification, type Notification } from '../../../core/events/notifications.ts';
import type { Logger } from '../../../core/model/logger.model.ts';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../../core/ports/document-store/sqlite.adapter.ts';
import type { MessageLog, OutgoingMessage } from '../../../core/ports/message-log/message-log.port.ts';
import {
  createNotificationOutboxService,
  type DraftedNotification,
  type NotificationOutboxService,
} from '../../../core/services/notification-outbox.service.ts';

const TOPIC = 'kb.notification';

let dir: string;
let documents: DocumentStore;
let published: OutgoingMessage[];
let publishFails: boolean;
let errors: string[];
let outbox: NotificationOutboxService;
/** The outbox of another process that wrote the deletions (its holds are not this one's). */
let writer: NotificationOutboxService;

const log = {
  async publish(_topic: string, messages: readonly OutgoingMessage[]) {
    if (publishFails) throw new Error('the log is down');
    published.push(...messages);
  },
} as unknown as MessageLog;

const logger: Logger = {
  info() {},
  warn() {},
  debug() {},
  error(_obj, msg) {
    errors.push(msg ?? '');
  },
};

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-notification-outbox-'));
  documents = createSqliteDocumentStore({ file: path.join(dir, 'documents.db') });
  published = [];
  publishFails = false;
  errors = [];
  // No drain on its own (a very long pause): each test drains when it means to.
  outbox = createNotificationOutboxService({ store: documents, log, topic: TOPIC, logger, retryMs: 3_600_000 });
  writer = createNotificationOutboxService({ store: documents, log, topic: TOPIC, retryMs: 3_600_000 });
});

afterEach(async () => {
  await outbox.close();
  await writer.close();
  await documents.close();
  await rm(dir, { recursive: true, force: true });
});

/** A document of workspace `ws` deleted with a draft of `via`; answers the notification recorded. */
async function deleteDocument(via: NotificationOutboxService = writer): Promise<{
  documentId: string;
  notification: Notification;
  drafted: DraftedNotification;
}> {
  const documentId = randomUUID();
  await documents.createDocument({
    id: documentId,
    workspaceId: 'ws',
    source: 'upload',
    firstVersion: {
      name: 'notes.txt',
      mimeType: 'text/plain',
      sizeBytes: 5,
      contentHash: 'a'.repeat(64),
      storageKey: `files/${documentId}`,
      metadata: {},
      changeReason: null,
      restoredFrom: null,
      createdBy: 'key-1',
      createdAt: new Date().toISOString(),
    },
  });
  const drafted = via.draft((changed) =>
    documentNotification('document.deleted', changed, changed.latest, changed.deletedAt ?? undefined),
  );
  await documents.softDelete('ws', documentId, new Date().toISOString(), undefined, drafted.draft);
  const notification = drafted.recorded();
  if (notification === undefined) throw new Error('the deletion recorded no notification');
  return { documentId, notification, drafted };
}

const eventIds = () => published.map((message) => (message.value as { event_id: string }).event_id);

describe('notification outbox', () => {
  it('publishes a delivered notification once and leaves nothing pending', async () => {
    const { documentId, notification } = await deleteDocument();
    await outbox.deliver(documentId, notification);
    expect(eventIds()).toEqual([notification.id]);
    expect(await documents.listPendingNotifications(10)).toEqual([]);
    expect(await outbox.drain()).toBe(0);
    expect(eventIds()).toEqual([notification.id]);
  });

  it('keeps what the log refused pending, and a drain publishes it under its recorded id', async () => {
    const { documentId, notification } = await deleteDocument();
    publishFails = true;
    await outbox.deliver(documentId, notification);
    expect(published).toEqual([]);
    await expect(outbox.drain()).rejects.toThrow('the log is down');
    expect((await documents.listPendingNotifications(10)).map((pending) => pending.id)).toEqual([notification.id]);

    publishFails = false;
    expect(await outbox.drain()).toBe(1);
    expect(eventIds()).toEqual([notification.id]);
    expect(published[0]).toMatchObject({
      key: documentId,
      value: { type: 'document.deleted', workspace_id: 'ws', subject: documentId },
    });
    expect(await documents.listPendingNotifications(10)).toEqual([]);
  });

  it('leaves a notification to its writer until released; released undelivered, a drain publishes it', async () => {
    const { documentId, notification, drafted } = await deleteDocument(outbox);
    // A drain between the deletion and its writer's own publish leaves it to the writer.
    expect(await outbox.drain()).toBe(0);
    expect(published).toEqual([]);
    // The writer failed before it published (its audit entry, say): released, it is drained soon.
    drafted.release();
    await vi.waitFor(() => expect(eventIds()).toEqual([notification.id]));
    expect(await documents.listPendingNotifications(10)).toEqual([]);
    expect(published[0]).toMatchObject({ key: documentId });
  });

  it('leaves an unreadable pending notification pending, says so, and publishes the others', async () => {
    const good = await deleteDocument();
    // An entry listed before it whose body is no notification (damaged, or written by something else).
    const corrupt = createSqliteDocumentStore({ file: path.join(dir, 'documents.db') });
    try {
      const doc = randomUUID();
      await corrupt.createDocument({
        id: doc,
        workspaceId: 'ws',
        source: 'upload',
        firstVersion: {
          name: 'x.txt',
          mimeType: 'text/plain',
          sizeBytes: 1,
          contentHash: 'b'.repeat(64),
          storageKey: `files/${doc}`,
          metadata: {},
          changeReason: null,
          restoredFrom: null,
          createdBy: 'key-1',
          createdAt: new Date().toISOString(),
        },
      });
      await corrupt.softDelete('ws', doc, new Date(Date.now() - 60_000).toISOString(), undefined, () => ({
        id: 'not-a-notification',
        body: '{"truncated',
      }));
    } finally {
      await corrupt.close();
    }
    expect(await outbox.drain()).toBe(1);
    expect(eventIds()).toEqual([good.notification.id]);
    expect(errors).toEqual(['a pending notification cannot be read; it is left pending and not published']);
    expect((await documents.listPendingNotifications(10)).map((pending) => pending.id)).toEqual(['not-a-notification']);
  });
});
