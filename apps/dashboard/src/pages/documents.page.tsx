import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Empty, LiveDown, Loading, Notice, StatusBadge } from '../components/feedback.tsx';
import { UploadZone } from '../components/upload-zone.tsx';
import { dateTime } from '../format.ts';
import { isDocumentOrSourceEvent, useLiveRefresh } from '../live-events.ts';
import { Link } from '../router.tsx';
import type { DocumentDetail, DocumentItem } from '../types.ts';

/** A list item, with the error of a failed document (read from the document itself). */
type Row = DocumentItem & Pick<DocumentDetail, 'error'>;

const PAGE_SIZE = 20;

interface Filters {
  status: string;
  source: string;
  after: string;
  before: string;
}

interface Page {
  documents: Row[];
  total: number;
}

function listQuery(filters: Filters, page: number): string {
  const q = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
  if (filters.status) q.set('status', filters.status);
  if (filters.source.trim()) q.set('source', filters.source.trim());
  if (filters.after) q.set('created_after', new Date(`${filters.after}T00:00:00`).toISOString());
  if (filters.before) q.set('created_before', new Date(`${filters.before}T23:59:59.999`).toISOString());
  return q.toString();
}

export function DocumentsPage() {
  const [filters, setFilters] = useState<Filters>({ status: '', source: '', after: '', before: '' });
  const [applied, setApplied] = useState<Filters>(filters);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<Page | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<{ doc: Row; purge: boolean } | null>(null);
  const generation = useRef(0);

  const load = async () => {
    const mine = ++generation.current;
    try {
      const list = await api<{ documents: DocumentItem[]; total: number }>(
        'GET',
        `/api/v1/documents?${listQuery(applied, page)}`,
      );
      // The list has names but no errors: read the failed documents for theirs.
      const details = await Promise.all(
        list.documents.map(
          async (d): Promise<Row> =>
            d.status !== 'failed'
              ? { ...d, error: null }
              : api<DocumentDetail>('GET', `/api/v1/documents/${d.document_id}`).then(
                  (detail) => ({ ...d, error: detail.error }),
                  () => ({ ...d, error: null }),
                ),
        ),
      );
      if (mine === generation.current) {
        setData({ documents: details, total: list.total });
        setError(null);
      }
    } catch (err) {
      if (mine === generation.current) setError(errorText(err));
    }
  };

  useEffect(() => {
    void load();
  }, [applied, page]);

  // A version finished or failed, a document went, a sync ran: read the list again.
  const live = useLiveRefresh(isDocumentOrSourceEvent, () => void load());

  const act = async (what: string, run: () => Promise<unknown>) => {
    setError(null);
    setMessage(null);
    try {
      await run();
      setMessage(what);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const pages = data ? Math.max(1, Math.ceil(data.total / PAGE_SIZE)) : 1;

  return (
    <section>
      <h1>Documents</h1>
      <UploadZone onUploaded={() => void load()} />
      <form
        class="filters"
        aria-label="Filter documents"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setApplied({ ...filters });
        }}
      >
        <label>
          Status
          <select value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.currentTarget.value })}>
            <option value="">any</option>
            <option value="pending">pending</option>
            <option value="processing">processing</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <label>
          Source
          <input value={filters.source} onInput={(e) => setFilters({ ...filters, source: e.currentTarget.value })} />
        </label>
        <label>
          Created from
          <input
            type="date"
            value={filters.after}
            onInput={(e) => setFilters({ ...filters, after: e.currentTarget.value })}
          />
        </label>
        <label>
          Created until
          <input
            type="date"
            value={filters.before}
            onInput={(e) => setFilters({ ...filters, before: e.currentTarget.value })}
          />
        </label>
        <button type="submit">Apply filters</button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {message && <Notice kind="ok">{message}</Notice>}
      {live === 'down' && <LiveDown />}
      {data === null ? (
        error ? null : (
          <Loading />
        )
      ) : data.documents.length === 0 ? (
        <Empty>
          {applied.status || applied.source || applied.after || applied.before
            ? 'No document matches these filters.'
            : 'No documents yet. Upload a file above to start.'}
        </Empty>
      ) : (
        <>
          <DataTable
            caption="Documents, newest first"
            columns={['Name', 'Status', 'Version', 'Chunks', 'Tokens', 'Created', 'Updated', 'Actions']}
          >
            {data.documents.map((d) => (
              <tr key={d.document_id} data-document-id={d.document_id}>
                <td>
                  <Link href={`/documents/${d.document_id}`}>{d.name}</Link>
                  {d.status === 'failed' && d.error && (
                    <p class="error-text small">
                      {d.error.stage}: {d.error.message}
                    </p>
                  )}
                </td>
                <td>
                  <StatusBadge status={d.status} />
                </td>
                <td>{d.version}</td>
                <td>{d.stats.chunks}</td>
                <td>{d.stats.tokens}</td>
                <td>{dateTime(d.created_at)}</td>
                <td>{dateTime(d.updated_at)}</td>
                <td class="row-actions">
                  {d.status === 'failed' && (
                    <button
                      type="button"
                      onClick={() =>
                        act(`Reprocessing ${d.name}.`, () =>
                          api('POST', `/api/v1/documents/${d.document_id}/reprocess`),
                        )
                      }
                    >
                      Reprocess<span class="sr-only"> {d.name}</span>
                    </button>
                  )}
                  <button type="button" onClick={() => setConfirm({ doc: d, purge: false })}>
                    Delete<span class="sr-only"> {d.name}</span>
                  </button>
                  <button type="button" class="danger" onClick={() => setConfirm({ doc: d, purge: true })}>
                    Purge<span class="sr-only"> {d.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
          <nav class="pager" aria-label="Pages of documents">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>
              Page {page} of {pages} · {data.total} document{data.total === 1 ? '' : 's'}
            </span>
            <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      )}
      {confirm && (
        <ConfirmDialog
          title={confirm.purge ? 'Purge this document?' : 'Delete this document?'}
          confirmLabel={confirm.purge ? 'Purge for good' : 'Delete'}
          danger
          onCancel={() => setConfirm(null)}
          onConfirm={() => {
            const { doc, purge } = confirm;
            setConfirm(null);
            void act(purge ? `${doc.name} is purged.` : `${doc.name} is deleted.`, () =>
              api('DELETE', `/api/v1/documents/${doc.document_id}${purge ? '?purge=true' : ''}`),
            );
          }}
        >
          {confirm.purge ? (
            <p>
              Every version, file, chunk and vector of “{confirm.doc.name}” is removed now, also from searches of the
              past. This cannot be undone.
            </p>
          ) : (
            <p>
              “{confirm.doc.name}” leaves the list and current search; its versions stay for searches of the past until
              retention removes them.
            </p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}
