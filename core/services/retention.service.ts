import type { Plan } from '../model/account-records.model.ts';
import { PLANS } from '../model/account-records.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';

/** Days a version stays searchable by `as_of` after it stopped being served; null = forever. */
export const RETENTION_DAYS: Readonly<Record<Plan, number | null>> = {
  starter: 30,
  pro: 90,
  business: 365,
  enterprise: null,
};

export interface RetentionReport {
  readonly workspaceId: string;
  readonly plan: Plan;
  readonly cutoff: string | null;
  readonly archived: number;
}

export interface RetentionOptions {
  /** The instant retention is measured from (default: now). */
  readonly now?: Date;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RetentionService {
  /** Archives, in every workspace, the versions past its plan's retention (see {@link runRetention}). */
  run(options?: RetentionOptions): Promise<RetentionReport[]>;
}

/**
 * Retention for `kb retention run`: archives what a workspace's plan no longer keeps searchable
 * by `as_of`. Promises that no file is deleted: an archived version's file stays in object
 * storage, only its chunks leave the index.
 */
export function createRetentionService(deps: {
  documents: DocumentStore;
  accountStore: AccountStore;
}): RetentionService {
  return { run: (options = {}) => runRetention(deps, options) };
}

/**
 * A workspace's plan is the highest plan among its active keys (a workspace without keys is
 * treated as `starter`). Versions that stopped being served before `now - retention` are archived:
 * their file stays in object storage, their chunks leave the index.
 */
export async function runRetention(
  deps: { documents: DocumentStore; accountStore: AccountStore },
  options: RetentionOptions = {},
): Promise<RetentionReport[]> {
  const now = options.now ?? new Date();
  const keys = await deps.accountStore.listKeys();
  const planOf = new Map<string, Plan>();
  for (const key of keys) {
    if (key.revokedAt !== null) continue;
    const current = planOf.get(key.workspaceId);
    if (!current || PLANS.indexOf(key.plan) > PLANS.indexOf(current)) planOf.set(key.workspaceId, key.plan);
  }
  const workspaces = await deps.documents.listWorkspaces();
  const reports: RetentionReport[] = [];
  let done = 0;
  for (const workspaceId of workspaces) {
    const plan = planOf.get(workspaceId) ?? 'starter';
    const days = RETENTION_DAYS[plan];
    let archived = 0;
    let cutoff: string | null = null;
    if (days !== null) {
      cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
      const expired = await deps.documents.listExpiredVersions(workspaceId, cutoff);
      for (const v of expired) {
        await deps.documents.archiveVersion(v.documentId, v.version, now.toISOString());
        archived++;
      }
    }
    reports.push({ workspaceId, plan, cutoff, archived });
    options.onProgress?.(++done, workspaces.length);
  }
  return reports;
}
