/**
 * What the chaos scenario checks once the pipeline drained: every acknowledged write against what
 * the service holds and serves (through its API, as a client sees it), every version's status (in
 * the store), and the audit log.
 */
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import type { Ledger, LedgerDocument } from './chaos-clients.ts';
import type { ChaosHttp } from './chaos-http.ts';

/** What the checks found; every count but `documents`, `deleted` and `completions` should be 0. */
export interface DocumentChecks {
  /** Documents the clients were told about, and how many of them they deleted. */
  readonly documents: number;
  readonly deleted: number;
  /** Acknowledged, not deleted, and not found. */
  missing: number;
  /** Not `completed` at the last acknowledged version (pending, processing or failed). */
  notCompleted: number;
  /** Latest or served version other than the last one the client was answered. */
  wrongVersion: number;
  /** Chunk lists with an index twice, an unexpected id, or a count other than `stats.chunks`. */
  chunkProblems: number;
  /** Keyword searches for a document's token that did not find exactly it, once, at that version. */
  searchMisses: number;
  /** Searches for the token of content an update replaced that still found something. */
  staleHits: number;
  /** Deleted documents still answered, listed or found by a search. */
  deletedVisible: number;
  /** Versions left `pending` or `processing` (of any document of the workspace). */
  unfinishedVersions: number;
  /** Versions nobody was answered for (a write applied whose answer was an error or never came). */
  unacknowledgedVersions: number;
  /** Acknowledged writes without their audit entry, and audit entries beyond one per write. */
  auditMissing: number;
  auditExtra: number;
  /** Documents that exist but no client was answered for. */
  orphans: number;
  /** Acknowledged documents with any of the problems above (each counted once). */
  readonly affected: Set<string>;
  /** Failed versions by error code (superseded versions and the like included). */
  readonly failedVersions: Record<string, number>;
  /** Every version's completion instant (epoch ms), for the recovery times. */
  readonly completions: number[];
  /** The first problems found, one line each. */
  readonly samples: string[];
}

type DocumentBody = {
  status?: string;
  version?: number;
  served_version?: number | null;
  stats?: { chunks?: number };
};

async function pool<T>(items: readonly T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await each(items[next++] as T);
    }),
  );
}

interface AuditPage {
  readonly entries: Array<{ document_id: string; action: string; version: number | null }>;
  readonly pagination: { has_more: boolean; next_cursor: string | null };
}

/** Every audit entry of the workspace, oldest first. */
async function readAudit(
  http: ChaosHttp,
): Promise<Array<{ document_id: string; action: string; version: number | null }>> {
  const entries: Array<{ document_id: string; action: string; version: number | null }> = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const read: { status: number; body: AuditPage } | null = await http.read<AuditPage>(
      `/api/v1/audit-logs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (read?.status !== 200) throw new Error(`reading the audit log answered ${read?.status ?? 'nothing'}`);
    entries.push(...read.body.entries);
    if (!read.body.pagination.has_more || !read.body.pagination.next_cursor) break;
    cursor = read.body.pagination.next_cursor;
  }
  return entries;
}

export async function checkDocuments(options: {
  readonly http: ChaosHttp;
  readonly ledger: Ledger;
  readonly documents: DocumentStore;
  readonly workspaceId: string;
}): Promise<DocumentChecks> {
  const { http, ledger, documents, workspaceId } = options;
  const docs = [...ledger.documents.values()];
  const checks: DocumentChecks = {
    documents: docs.length,
    deleted: docs.filter((d) => d.deleted).length,
    missing: 0,
    notCompleted: 0,
    wrongVersion: 0,
    chunkProblems: 0,
    searchMisses: 0,
    staleHits: 0,
    deletedVisible: 0,
    unfinishedVersions: 0,
    unacknowledgedVersions: 0,
    auditMissing: 0,
    auditExtra: 0,
    orphans: 0,
    affected: new Set(),
    failedVersions: {},
    completions: [],
    samples: [],
  };
  const note = (line: string) => {
    if (checks.samples.length < 40) checks.samples.push(line);
  };

  async function search(query: string) {
    const read = await http.read<{ results: Array<{ document_id: string; version: number; chunk_id: string }> }>(
      '/api/v1/search',
      { query, mode: 'keyword', group_by: 'none', limit: 10 },
    );
    if (read?.status !== 200) throw new Error(`search answered ${read?.status ?? 'nothing'}`);
    return read.body.results;
  }

  /** Every version of `id`; `acknowledged` null for an orphan (all of whose versions count as the orphan). */
  async function checkVersions(id: string, acknowledged: readonly number[] | null): Promise<void> {
    for (const v of await documents.listVersions(workspaceId, id)) {
      if (v.completedAt) checks.completions.push(Date.parse(v.completedAt));
      if (v.status === 'pending' || v.status === 'processing') {
        checks.unfinishedVersions++;
        note(`${id} v${v.version} left ${v.status}`);
      }
      if (v.status === 'failed') {
        const code = v.error?.code ?? 'unknown';
        checks.failedVersions[code] = (checks.failedVersions[code] ?? 0) + 1;
        if (code !== 'superseded') {
          note(`${id} v${v.version} failed in ${v.error?.stage}: ${code} ${v.error?.message?.slice(0, 160) ?? ''}`);
        }
      }
      if (acknowledged !== null && !acknowledged.includes(v.version)) {
        checks.unacknowledgedVersions++;
        note(`${id} v${v.version} exists but no client was answered for it (${v.status})`);
      }
    }
  }

  async function checkLive(doc: LedgerDocument): Promise<void> {
    const latest = doc.versions.at(-1) as number;
    const read = await http.read<DocumentBody>(`/api/v1/documents/${doc.id}`);
    if (read?.status !== 200) {
      checks.missing++;
      checks.affected.add(doc.id);
      note(`${doc.id} answered ${read?.status ?? 'nothing'}, acknowledged up to v${latest}`);
      return;
    }
    const body = read.body;
    if (body.status !== 'completed') {
      checks.notCompleted++;
      checks.affected.add(doc.id);
      note(`${doc.id} is ${body.status} at v${body.version} (acknowledged v${latest})`);
    }
    if (body.version !== latest || body.served_version !== latest) {
      checks.wrongVersion++;
      checks.affected.add(doc.id);
      note(`${doc.id}: latest v${body.version}, served v${body.served_version}, acknowledged v${latest}`);
    }
    const chunks = await http.read<{ version: number; chunks: Array<{ id: string; index: number }> }>(
      `/api/v1/chunks/${doc.id}?limit=1000`,
    );
    const list = chunks?.status === 200 ? chunks.body.chunks : [];
    const indexes = new Set(list.map((c) => c.index));
    const servedVersion = chunks?.body.version;
    const badIds = list.filter((c) => c.id !== `${doc.id}:${servedVersion}:${c.index}`).length;
    if (
      chunks?.status !== 200 ||
      indexes.size !== list.length ||
      badIds > 0 ||
      list.length !== body.stats?.chunks ||
      list.length === 0
    ) {
      checks.chunkProblems++;
      checks.affected.add(doc.id);
      note(
        `${doc.id}: ${list.length} chunks (${indexes.size} indexes, ${badIds} odd ids), stats say ${body.stats?.chunks}`,
      );
    }
    const hits = await search(doc.token);
    if (hits.length !== 1 || hits[0]?.document_id !== doc.id || hits[0]?.version !== latest) {
      checks.searchMisses++;
      checks.affected.add(doc.id);
      note(`search ${doc.token} (${doc.id} v${latest}) found ${JSON.stringify(hits.map((h) => h.chunk_id))}`);
    }
    for (const token of doc.replacedTokens) {
      const stale = await search(token);
      if (stale.length > 0) {
        checks.staleHits++;
        checks.affected.add(doc.id);
        note(`replaced token ${token} of ${doc.id} still found: ${JSON.stringify(stale.map((h) => h.chunk_id))}`);
      }
    }
  }

  async function checkDeleted(doc: LedgerDocument): Promise<void> {
    const read = await http.read(`/api/v1/documents/${doc.id}`);
    let visible = read?.status !== 404;
    for (const token of [doc.token, ...doc.replacedTokens]) {
      if ((await search(token)).length > 0) visible = true;
    }
    if (visible) {
      checks.deletedVisible++;
      checks.affected.add(doc.id);
      note(`deleted ${doc.id} still visible (GET ${read?.status ?? 'nothing'} or found by its token)`);
    }
  }

  await pool(docs, 4, async (doc) => {
    if (doc.deleted) await checkDeleted(doc);
    else await checkLive(doc);
    await checkVersions(doc.id, doc.versions);
  });

  // Orphans: documents listed that no client was answered for (and deleted ones listed).
  for (let offset = 0; ; offset += 500) {
    const page = await documents.listDocuments({ workspaceId, limit: 500, offset });
    for (const listed of page.documents) {
      const known = ledger.documents.get(listed.id);
      if (!known) {
        checks.orphans++;
        note(`orphan ${listed.id} (${listed.latest.name} v${listed.latestVersion}, ${listed.latest.status})`);
        await checkVersions(listed.id, null);
      } else if (known.deleted) {
        checks.deletedVisible++;
        checks.affected.add(listed.id);
        note(`deleted ${listed.id} still listed`);
      }
    }
    if (page.documents.length < 500) break;
  }

  // The audit log: one entry per acknowledged write, matched by document, action and version.
  const wanted = new Map<string, number>();
  for (const doc of docs) {
    for (const a of doc.actions) {
      const key = `${doc.id} ${a.action} ${a.version}`;
      wanted.set(key, (wanted.get(key) ?? 0) + 1);
    }
  }
  for (const entry of await readAudit(http)) {
    const key = `${entry.document_id} ${entry.action} ${entry.version}`;
    const left = wanted.get(key) ?? 0;
    if (left > 0) {
      wanted.set(key, left - 1);
    } else {
      checks.auditExtra++;
      note(`audit entry without an acknowledged write: ${key}`);
    }
  }
  for (const [key, left] of wanted) {
    if (left > 0) {
      checks.auditMissing += left;
      note(`acknowledged write without its audit entry: ${key}`);
    }
  }
  return checks;
}
