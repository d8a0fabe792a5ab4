import type { AccessScope } from '../model/access-scope.model.ts';

/**
 * Who is asking: the workspace, the authenticated key's id (or, for a person signed in to the
 * dashboard, the account's id with `actorType: 'user'`), and the request's trace id.
 */
export interface RequestContext {
  readonly workspaceId: string;
  readonly keyId: string;
  /** Absent: an API key. */
  readonly actorType?: 'api_key' | 'user';
  readonly traceId: string;
  /**
   * Present when the request came with a scoped token: `keyId` is then its parent key's id, and
   * every document-level read and search is narrowed to the token's rules (`access-rules.ts`).
   */
  readonly scope?: AccessScope;
}

/** A person acting in the dashboard, for the audit log. */
export interface AccountActor {
  readonly accountId: string;
  readonly workspaceId: string;
  readonly traceId: string;
}
