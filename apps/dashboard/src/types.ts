/**
 * The API's views the dashboard reads. The response shapes come from core/model/response-views.model.ts
 * as types only (nothing of the core is bundled), named as the pages know them.
 */
export type {
  ApiKeyView as ApiKey,
  AuditEntryView as AuditEntry,
  ChunkView as Chunk,
  CompareView as Compare,
  DiffEntryView as DiffEntry,
  DocumentListItemView as DocumentItem,
  DocumentNameView as DocumentName,
  DocumentView as DocumentDetail,
  PaginationView as Pagination,
  SearchResultView as SearchResult,
  UsageView as Usage,
  VersionView as Version,
} from '../../../core/model/response-views.model.ts';

export type Status = 'pending' | 'processing' | 'completed' | 'failed';

export interface Account {
  id: string;
  email: string;
  role: 'owner' | 'member';
  workspaces: string[];
}

export interface SessionInfo {
  account: Account;
  workspace: string;
  csrf_token: string;
  expires_at: string;
  /** The account signed in with a password the service generated: it must choose its own first. */
  password_change_required: boolean;
}

export interface IngestError {
  code: string;
  message: string;
  stage: string;
  attempts: number;
  at: string;
}

export type { RunView as SourceRun, SourceView as SourceSummary } from '../../../core/model/source-views.model.ts';

export type {
  DeliveryAttemptView as DeliveryAttempt,
  WebhookDeliveryView as WebhookDelivery,
  WebhookEndpointView as WebhookEndpoint,
} from '../../../core/webhooks/webhook-views.ts';
