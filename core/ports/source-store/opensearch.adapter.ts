import { createHash } from 'node:crypto';
import { KbError } from '../../errors/kb-error.ts';
import {
  type BulkAction,
  createEngineHttp,
  type EngineHttp,
  requireBulkSuccess,
  requireLookupAnswer,
  type SearchBody,
  type SourceHit,
} from '../document-store/opensearch/opensearch-http.ts';
import type { ItemRecord, RunClaim, RunRecord, SourceRecord, SourceStore } from './source-store.port.ts';

export interface OpenSearchSourceStoreOptions {
  readonly url: string;
  /** Indexes are `<indexPrefix>-sources`, `-source-runs`, `-source-items`, `-source-keys`. */
  readonly indexPrefix: string;
  readonly requestTimeoutMs?: number;
}

const KEYWORD = { type: 'keyword' } as const;
const OPAQUE = { type: 'object', enabled: false } as const;

/** Records of one index are read by id (real time) or searched by these keyword fields. */
const MAPPINGS = {
  sources: { id: KEYWORD, workspace_id: KEYWORD, name: KEYWORD, record: OPAQUE },
  runs: { id: KEYWORD, source_id: KEYWORD, status: KEYWORD, record: OPAQUE },
  items: { id: KEYWORD, source_id: KEYWORD, item_key: KEYWORD, document_id: KEYWORD, record: OPAQUE },
  // Unique keys: a workspace's source names, a source's claim on its one running run, a
  // document's item.
  keys: { kind: KEYWORD, source_id: KEYWORD, value: OPAQUE },
} as const;

type IndexRole = keyof typeof MAPPINGS;

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');
const nameKey = (workspaceId: string, name: string) => `name:${digest(workspaceId, name)}`;
const claimKey = (sourceId: string) => `claim:${sourceId}`;
const documentKey = (documentId: string) => `document:${documentId}`;
const itemId = (sourceId: string, itemKey: string) => digest(sourceId, itemKey);

interface Guarded<S> {
  readonly source: S;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

interface ClaimValue {
  readonly run: RunRecord;
}

const nameTaken = (name: string) =>
  new KbError('conflict', `A source named "${name}" already exists in this workspace.`);

/** How many times a guarded write is retried after losing a race before giving up. */
const MAX_ATTEMPTS = 20;

/**
 * The source store on OpenSearch, for the distributed runtime. Four indexes; every record a
 * guarantee depends on is read by id (real time) and written with optimistic concurrency:
 *
 * - a source's name is a record in `-source-keys` created with `op_type=create` before the source
 *   (taken: `conflict`), removed after it;
 * - the one running run of a source is the claim record `claim:<source>` in `-source-keys`,
 *   replaced only with `if_seq_no`/`if_primary_term` of the version read: of simultaneous
 *   claimers in any number of processes exactly one wins, the others read the winner's run.
 *   The claim carries the whole run, so a claimer that finds a claim whose run record is not
 *   written yet (its writer is between the two writes) answers that run as running, and a claim
 *   whose run never got written goes stale like any other;
 * - a run's progress and end are guarded writes that first check it is still `running`.
 *
 * Searches (lists) read ids from a refreshed index and the records by id, so what they return is
 * current. Items are written without refresh; `listItems` refreshes their index first. A
 * document's item key is a record `document:<id>`, read by id.
 *
 * Outside the contract: a crash between the writes of one change (a source without its name
 * record, or the reverse) leaves a record that the next write of the same name or source
 * repairs or that stays unused.
 */
export async function createOpenSearchSourceStore(options: OpenSearchSourceStoreOptions): Promise<SourceStore> {
  const http: EngineHttp = createEngineHttp({ url: options.url, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
  const index: Record<IndexRole, string> = {
    sources: `${options.indexPrefix}-sources`,
    runs: `${options.indexPrefix}-source-runs`,
    items: `${options.indexPrefix}-source-items`,
    keys: `${options.indexPrefix}-source-keys`,
  };
  const docPath = (role: IndexRole, id: string) => `/${index[role]}/_doc/${encodeURIComponent(id)}`;

  async function ensureIndex(role: IndexRole): Promise<void> {
    const exists = await http.request('HEAD', `/${index[role]}`, undefined, { allow: [404] });
    if (exists.status !== 404) return;
    const created = await http.request<{ error?: { type?: string } }>(
      'PUT',
      `/${index[role]}`,
      { settings: { number_of_shards: 1 }, mappings: { dynamic: 'strict', properties: MAPPINGS[role] } },
      { allow: [400] },
    );
    if (created.status === 400 && created.body.error?.type !== 'resource_already_exists_exception') {
      throw new KbError('config-invalid', `Cannot create index ${index[role]}: ${JSON.stringify(created.body)}`);
    }
    await http.request('GET', `/_cluster/health/${index[role]}`, undefined, {
      query: { wait_for_status: 'yellow', timeout: '30s' },
    });
  }

  async function get<S>(role: IndexRole, id: string): Promise<Guarded<S> | null> {
    const response = await http.request<SourceHit<S>>('GET', docPath(role, id), undefined, { allow: [404] });
    if (response.status === 404 || !response.body._source) return null;
    return {
      source: response.body._source,
      seqNo: response.body._seq_no ?? 0,
      primaryTerm: response.body._primary_term ?? 0,
    };
  }

  /** Writes a record: `create` only if the id is free, a guard only if unchanged since read. False when that failed. */
  async function put(
    role: IndexRole,
    id: string,
    body: object,
    condition: 'create' | Guarded<unknown> | null,
    refresh = true,
  ) {
    const query: Record<string, string | number> = refresh ? { refresh: 'true' } : {};
    if (condition === 'create') query.op_type = 'create';
    else if (condition !== null) {
      query.if_seq_no = condition.seqNo;
      query.if_primary_term = condition.primaryTerm;
    }
    const response = await http.request('PUT', docPath(role, id), body, { query, allow: [409] });
    return response.status !== 409;
  }

  async function remove(role: IndexRole, id: string): Promise<boolean> {
    const response = await http.request<{ result?: string }>('DELETE', docPath(role, id), undefined, {
      allow: [404],
      query: { refresh: 'true' },
    });
    return response.status !== 404;
  }

  /** Ids of the records of `role` matching `query`, sorted, every page (search_after), after a refresh. */
  async function searchIds(role: IndexRole, query: object, sortField: string, order: 'asc' | 'desc', limit = Infinity) {
    await http.request('POST', `/${index[role]}/_refresh`);
    const ids: string[] = [];
    let after: readonly unknown[] | undefined;
    while (ids.length < limit) {
      const size = Math.min(1000, limit - ids.length);
      const response = await http.request<SearchBody<unknown>>('POST', `/${index[role]}/_search`, {
        query,
        size,
        _source: false,
        sort: [{ [sortField]: order }, { id: order }],
        ...(after ? { search_after: after } : {}),
      });
      const hits = response.body.hits.hits;
      for (const hit of hits) ids.push(hit._id);
      if (hits.length < size) break;
      after = hits.at(-1)?.sort;
    }
    return ids;
  }

  /** Records by id (real time), in order, missing ones left out. */
  async function getMany<S>(role: IndexRole, ids: readonly string[]): Promise<S[]> {
    const out: S[] = [];
    for (let start = 0; start < ids.length; start += 1000) {
      const response = await http.request<{ docs: SourceHit<S>[] }>('POST', `/${index[role]}/_mget`, {
        ids: ids.slice(start, start + 1000),
      });
      for (const doc of response.body.docs) {
        // A lookup whose shard did not answer is no missing record: engine-unavailable.
        requireLookupAnswer(doc, `a record of ${index[role]}`);
        if (doc.found && doc._source) out.push(doc._source);
      }
    }
    return out;
  }

  const sourceBody = (s: SourceRecord) => ({ id: s.id, workspace_id: s.workspaceId, name: s.name, record: s });
  const runBody = (r: RunRecord) => ({ id: r.id, source_id: r.sourceId, status: r.status, record: r });
  const itemBody = (i: ItemRecord) => ({
    id: itemId(i.sourceId, i.itemKey),
    source_id: i.sourceId,
    item_key: i.itemKey,
    document_id: i.documentId,
    record: i,
  });

  /** Changes a run that is still `running`; false when it is not (or gone). */
  async function changeRunning(
    runId: string,
    change: (run: RunRecord) => RunRecord,
    refresh: boolean,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await get<{ record: RunRecord }>('runs', runId);
      const run = current?.source.record;
      if (!current || run?.status !== 'running') return false;
      if (await put('runs', runId, runBody(change(run)), current, refresh)) return true;
    }
    throw new KbError('conflict', `Run ${runId} kept changing; try again.`);
  }

  async function deleteByQuery(role: IndexRole, query: object, sortField: string): Promise<void> {
    const ids = await searchIds(role, query, sortField, 'asc');
    const actions: BulkAction[] = ids.map((id) => ({ kind: 'delete', index: index[role], id }));
    if (actions.length > 0) requireBulkSuccess(await http.bulk(actions, true), `delete from ${index[role]}`, [404]);
  }

  try {
    for (const role of Object.keys(MAPPINGS) as IndexRole[]) await ensureIndex(role);
  } catch (error) {
    await http.close();
    throw error;
  }

  return {
    kind: 'opensearch',

    async createSource(source) {
      if (
        !(await put('keys', nameKey(source.workspaceId, source.name), { kind: 'name', source_id: source.id }, 'create'))
      ) {
        const holder = await get<{ source_id: string }>('keys', nameKey(source.workspaceId, source.name));
        // A name record whose source was never written (a crash in between) is taken over.
        const orphan = holder && !(await get('sources', holder.source.source_id));
        if (
          !orphan ||
          !(await put('keys', nameKey(source.workspaceId, source.name), { kind: 'name', source_id: source.id }, holder))
        ) {
          throw nameTaken(source.name);
        }
      }
      await put('sources', source.id, sourceBody(source), null);
      return source;
    },

    async getSource(workspaceId, id) {
      const found = await get<{ record: SourceRecord }>('sources', id);
      return found && found.source.record.workspaceId === workspaceId ? found.source.record : null;
    },

    async listSources(workspaceId) {
      const query = workspaceId === null ? { match_all: {} } : { term: { workspace_id: workspaceId } };
      const ids = await searchIds('sources', query, 'name', 'asc');
      const records = (await getMany<{ record: SourceRecord }>('sources', ids)).map((s) => s.record);
      return records.sort((a, b) =>
        a.workspaceId === b.workspaceId
          ? a.name < b.name
            ? -1
            : a.name > b.name
              ? 1
              : 0
          : a.workspaceId < b.workspaceId
            ? -1
            : 1,
      );
    },

    async updateSource(workspaceId, id, patch) {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await get<{ record: SourceRecord }>('sources', id);
        if (!current || current.source.record.workspaceId !== workspaceId) return null;
        const before = current.source.record;
        const next: SourceRecord = { ...before, ...patch };
        const renamed = next.name !== before.name;
        if (
          renamed &&
          !(await put('keys', nameKey(workspaceId, next.name), { kind: 'name', source_id: id }, 'create'))
        ) {
          throw nameTaken(next.name);
        }
        if (await put('sources', id, sourceBody(next), current)) {
          if (renamed) await remove('keys', nameKey(workspaceId, before.name));
          return next;
        }
        if (renamed) await remove('keys', nameKey(workspaceId, next.name));
      }
      throw new KbError('conflict', `Source ${id} kept changing; try again.`);
    },

    async deleteSource(workspaceId, id) {
      const current = await get<{ record: SourceRecord }>('sources', id);
      if (!current || current.source.record.workspaceId !== workspaceId) return false;
      if (!(await remove('sources', id))) return false;
      await remove('keys', nameKey(workspaceId, current.source.record.name));
      await remove('keys', claimKey(id));
      const items = await searchIds('items', { term: { source_id: id } }, 'item_key', 'asc');
      const itemRecords = await getMany<{ record: ItemRecord }>('items', items);
      const actions: BulkAction[] = [
        ...items.map((itemDocId): BulkAction => ({ kind: 'delete', index: index.items, id: itemDocId })),
        ...itemRecords.map(
          (i): BulkAction => ({ kind: 'delete', index: index.keys, id: documentKey(i.record.documentId) }),
        ),
      ];
      if (actions.length > 0) requireBulkSuccess(await http.bulk(actions, true), 'delete the items of a source', [404]);
      await deleteByQuery('runs', { term: { source_id: id } }, 'id');
      return true;
    },

    async claimRun(run, staleBefore): Promise<RunClaim> {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const claim = await get<{ value: ClaimValue }>('keys', claimKey(run.sourceId));
        let stale: RunRecord | null = null;
        if (claim) {
          const claimed = claim.source.value.run;
          const current = (await get<{ record: RunRecord }>('runs', claimed.id))?.source.record ?? null;
          const holder = current ?? claimed;
          if (holder.status === 'running' && holder.heartbeatAt >= staleBefore) return { running: holder };
          if (current?.status === 'running') stale = current;
        }
        const body = { kind: 'claim', source_id: run.sourceId, value: { run } };
        if (!(await put('keys', claimKey(run.sourceId), body, claim ?? 'create'))) continue;
        if (stale) {
          await changeRunning(
            stale.id,
            (r) => ({
              ...r,
              status: 'failed',
              finishedAt: run.startedAt,
              errors: [
                ...r.errors,
                {
                  item: null,
                  code: 'sync-interrupted',
                  detail: 'The process running this sync stopped before it finished.',
                },
              ],
            }),
            true,
          );
        }
        const started: RunRecord = { ...run, status: 'running', finishedAt: null };
        await put('runs', run.id, runBody(started), 'create');
        return { started };
      }
      throw new KbError('conflict', `The claim on source ${run.sourceId} kept changing; try again.`);
    },

    updateRun: (runId, progress) => changeRunning(runId, (r) => ({ ...r, ...progress }), false),

    finishRun: (runId, end) => changeRunning(runId, (r) => ({ ...r, ...end }), true),

    async getRun(sourceId, runId) {
      const found = await get<{ record: RunRecord }>('runs', runId);
      return found && found.source.record.sourceId === sourceId ? found.source.record : null;
    },

    async listRuns(sourceId, limit) {
      const ids = await searchIds('runs', { term: { source_id: sourceId } }, 'id', 'desc', limit);
      return (await getMany<{ record: RunRecord }>('runs', ids)).map((r) => r.record);
    },

    async listRunningRuns() {
      const ids = await searchIds('runs', { term: { status: 'running' } }, 'id', 'asc');
      return (await getMany<{ record: RunRecord }>('runs', ids))
        .map((r) => r.record)
        .filter((r) => r.status === 'running');
    },

    async listItems(sourceId) {
      const ids = await searchIds('items', { term: { source_id: sourceId } }, 'item_key', 'asc');
      return (await getMany<{ record: ItemRecord }>('items', ids)).map((i) => i.record);
    },

    async putItem(item) {
      const id = itemId(item.sourceId, item.itemKey);
      const before = await get<{ record: ItemRecord }>('items', id);
      const actions: BulkAction[] = [
        { kind: 'index', index: index.items, id, source: itemBody(item) },
        {
          kind: 'index',
          index: index.keys,
          id: documentKey(item.documentId),
          source: { kind: 'document', source_id: item.sourceId, value: { itemKey: item.itemKey } },
        },
      ];
      if (before && before.source.record.documentId !== item.documentId) {
        actions.push({ kind: 'delete', index: index.keys, id: documentKey(before.source.record.documentId) });
      }
      requireBulkSuccess(await http.bulk(actions, false), 'write an item', [404]);
    },

    async deleteItem(sourceId, itemKey) {
      const id = itemId(sourceId, itemKey);
      const before = await get<{ record: ItemRecord }>('items', id);
      if (!before) return;
      const actions: BulkAction[] = [
        { kind: 'delete', index: index.items, id },
        { kind: 'delete', index: index.keys, id: documentKey(before.source.record.documentId) },
      ];
      requireBulkSuccess(await http.bulk(actions, false), 'delete an item', [404]);
    },

    async itemKeysOf(documentIds) {
      const out = new Map<string, string>();
      if (documentIds.length === 0) return out;
      // The document id is read back from each found record's key.
      const response = await http.request<{ docs: SourceHit<{ value: { itemKey: string } }>[] }>(
        'POST',
        `/${index.keys}/_mget`,
        { ids: documentIds.map((id) => documentKey(id)) },
      );
      for (const doc of response.body.docs) {
        requireLookupAnswer(doc, `a record of ${index.keys}`);
        if (doc.found && doc._source) out.set(doc._id.slice('document:'.length), doc._source.value.itemKey);
      }
      return out;
    },

    async close() {
      await http.close();
    },
  };
}
