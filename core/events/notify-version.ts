import type { CompletionOutcome, DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import { documentNotification, publishNotification } from './notifications.ts';

/** What publishing a version's notification needs: the log, its topic and the store to read the committed state from. */
export interface VersionNotifier {
  readonly log: MessageLog;
  readonly documents: DocumentStore;
  readonly topic: string;
}

/**
 * Publishes `document.version.completed` or `document.version.failed` for a version whose status
 * was just committed, with the version and document as the store holds them now. Nothing is
 * published when the version is gone (purged meanwhile) or its status is no longer the one reported.
 */
export async function notifyVersionSettled(
  notifier: VersionNotifier,
  ref: { readonly workspaceId: string; readonly documentId: string; readonly version: number },
  status: 'completed' | 'failed',
): Promise<void> {
  const { document, version } = await notifier.documents.getDocumentAndVersion(
    ref.workspaceId,
    ref.documentId,
    ref.version,
  );
  if (!version || version.status !== status) return;
  const type = status === 'completed' ? 'document.version.completed' : 'document.version.failed';
  const at = (status === 'completed' ? version.completedAt : version.error?.at) ?? undefined;
  await publishNotification(
    notifier.log,
    notifier.topic,
    documentNotification(
      type,
      { id: ref.documentId, workspaceId: ref.workspaceId, source: document?.source ?? '' },
      version,
      at,
    ),
  );
}

/**
 * Publishes `document.version.completed` for a version the caller just completed, from what the
 * completion returned (the version as the store holds it after the call), without reading it back.
 * Nothing is published when the version did not end completed (`completed` is null).
 */
export async function notifyVersionCompleted(
  notifier: Pick<VersionNotifier, 'log' | 'topic'>,
  ref: { readonly workspaceId: string; readonly documentId: string; readonly version: number },
  completed: CompletionOutcome['completed'],
): Promise<void> {
  if (completed === null) return;
  await publishNotification(
    notifier.log,
    notifier.topic,
    documentNotification(
      'document.version.completed',
      { id: ref.documentId, workspaceId: ref.workspaceId, source: completed.source },
      { version: ref.version, status: 'completed', name: completed.name, error: null },
      completed.completedAt,
    ),
  );
}
