import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { useActorNames } from '../components/actor-names.ts';
import { DataTable } from '../components/data-table.tsx';
import { useDocumentNames } from '../components/document-names.ts';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { dateTime, shortId } from '../format.ts';
import { Link } from '../router.tsx';
import type { Account, AuditEntry, DocumentName, Pagination } from '../types.ts';

const ACTIONS = ['create', 'update', 'rollback', 'delete', 'purge', 'key_create', 'key_revoke'];

interface Filters {
  documentId: string;
  action: string;
  since: string;
  until: string;
}

function query(f: Filters, cursor: string | null): string {
  const q = new URLSearchParams({ limit: '50', order: 'desc' });
  if (f.documentId.trim()) q.set('document_id', f.documentId.trim());
  if (f.action) q.set('action', f.action);
  if (f.since) q.set('since', new Date(f.since).toISOString());
  if (f.until) q.set('until', new Date(f.until).toISOString());
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}

function describe(e: AuditEntry): string {
  const meta = e.after?.metadata ?? null;
  if (e.action === 'key_create' || e.action === 'key_revoke') {
    return `${e.action === 'key_create' ? 'Created' : 'Revoked'} key “${String(meta?.name ?? '')}” (${String(meta?.prefix ?? '')}…)`;
  }
  const from = e.before?.version;
  const to = e.after?.version;
  if (e.action === 'delete') return from != null ? `deleted (version ${from} was the latest)` : 'deleted';
  if (e.action === 'purge') return 'purged: every version, file, chunk and vector removed';
  if (e.action === 'rollback' && e.after?.version != null && from != null) {
    return `version ${from} → ${to} (rolled back)`;
  }
  if (from != null && to != null) return `version ${from} → ${to}`;
  if (to != null) return `version ${to}`;
  return '';
}

/** The document of an entry: its name linked, a deleted one's name marked deleted (not linked). */
function DocumentCell(props: { id: string; named: DocumentName | undefined }) {
  const { id, named } = props;
  if (!id) return <>—</>;
  if (named?.deleted) {
    return (
      <span class="muted" data-deleted-document={id}>
        {named.name ? (
          <>
            <span class="doc-name">{named.name}</span> (deleted)
          </>
        ) : (
          <>
            purged document <code>{shortId(id)}</code>
          </>
        )}
      </span>
    );
  }
  return <Link href={`/documents/${id}`}>{named?.name ?? <code>{shortId(id)}</code>}</Link>;
}

export function AuditPage(props: { query: URLSearchParams; account: Account }) {
  const actorName = useActorNames(props.account);
  const initial: Filters = { documentId: props.query.get('document_id') ?? '', action: '', since: '', until: '' };
  const [filters, setFilters] = useState<Filters>(initial);
  const [applied, setApplied] = useState<Filters>(initial);
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [page, setPage] = useState<Pagination | null>(null);
  const [error, setError] = useState<string | null>(null);
  const documentNames = useDocumentNames((entries ?? []).map((e) => e.document_id));

  const load = async (cursor: string | null) => {
    try {
      const r = await api<{ entries: AuditEntry[]; pagination: Pagination }>(
        'GET',
        `/api/v1/audit-logs?${query(applied, cursor)}`,
      );
      setEntries((prev) => (cursor && prev ? [...prev, ...r.entries] : r.entries));
      setPage(r.pagination);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };

  useEffect(() => {
    setEntries(null);
    void load(null);
  }, [applied]);

  return (
    <section>
      <h1>Audit log</h1>
      <form
        class="filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...filters });
        }}
      >
        <label>
          Document id
          <input
            value={filters.documentId}
            onInput={(e) => setFilters({ ...filters, documentId: e.currentTarget.value })}
          />
        </label>
        <label>
          Action
          <select value={filters.action} onChange={(e) => setFilters({ ...filters, action: e.currentTarget.value })}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input
            type="datetime-local"
            value={filters.since}
            onInput={(e) => setFilters({ ...filters, since: e.currentTarget.value })}
          />
        </label>
        <label>
          Until
          <input
            type="datetime-local"
            value={filters.until}
            onInput={(e) => setFilters({ ...filters, until: e.currentTarget.value })}
          />
        </label>
        <button type="submit">Apply filters</button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {entries === null ? (
        error ? null : (
          <Loading />
        )
      ) : entries.length === 0 ? (
        <Empty>No audit entries match.</Empty>
      ) : (
        <>
          <p class="muted">
            {page?.total ?? entries.length} entr{(page?.total ?? entries.length) === 1 ? 'y' : 'ies'}, newest first
          </p>
          <DataTable caption="Audit entries" columns={['Time', 'Action', 'Document', 'What', 'Change reason', 'By']}>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{dateTime(e.timestamp)}</td>
                <td>
                  <span class="tag">{e.action}</span>
                </td>
                <td>
                  <DocumentCell id={e.document_id} named={documentNames.get(e.document_id)} />
                </td>
                <td>{describe(e)}</td>
                <td>{e.change_reason ?? '—'}</td>
                <td>
                  {e.actor.type === 'source'
                    ? `source “${e.actor.name ?? shortId(e.actor.id)}”`
                    : e.actor.type === 'user' && e.actor.id !== props.account.id
                      ? `person ${shortId(e.actor.id)}`
                      : actorName(e.actor.id)}
                </td>
              </tr>
            ))}
          </DataTable>
          {page?.has_more && (
            <button type="button" onClick={() => void load(page.next_cursor)}>
              Load more
            </button>
          )}
        </>
      )}
    </section>
  );
}
