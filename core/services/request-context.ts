import type { AccessScope } from '../model/access-scope.model.ts';
import type { AuditActor } from '../model/account-records.model.ts';

/**
 * Who is asking: the workspace, the authenticated key's id (or, for a person signed in to the
 * dashboard, the account's id with `actorType: 'user'`; for a source's sync run, the source's id
 * with `actorType: 'source'`), and the request's trace id.
 */
export interface RequestContext {
  readonly workspaceId: string;
  readonly keyId: string;
  /** Absent: an API key. */
  readonly actorType?: 'api_key' | 'user' | 'source';
  /** The acting source's name (`actorType: 'source'`), kept in the audit entries it causes. */
  readonly actorName?: string;
  readonly traceId: string;
  /**
   * Present when the request came with a scoped token: `keyId` is then its parent key's id, and
   * every document-level read and search is narrowed to the token's rules (`access-rules.ts`).
   */
  readonly scope?: AccessScope;
}

/** The audit actor of `ctx`: a key, a dashboard account, or a source (with its name). */
export function actorOf(ctx: RequestContext): AuditActor {
  return {
    type: ctx.actorType ?? 'api_key',
    id: ctx.keyId,
    ...(ctx.actorType === 'source' && ctx.actorName !== undefined ? { name: ctx.actorName } : {}),
  };
}

/** What a version's `created_by` says: the key's or account's id, `source:<id>` for a source. */
export function createdByOf(ctx: RequestContext): string {
  return ctx.actorType === 'source' ? `source:${ctx.keyId}` : ctx.keyId;
}

/** A person acting in the dashboard, for the audit log. */
export interface AccountActor {
  readonly accountId: string;
  readonly workspaceId: string;
  readonly traceId: string;
}
