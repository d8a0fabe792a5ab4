import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { DataTable } from '../components/data-table.tsx';
import { Empty, LiveDown, Loading, Notice } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { useLiveRefresh } from '../live-events.ts';
import { Link } from '../router.tsx';
import type { DocumentItem, SourceRun, SourceSummary } from '../types.ts';

const KINDS = ['folder', 'web', 's3'] as const;
type Kind = (typeof KINDS)[number];

/** Lines or commas of a text field, trimmed, empty ones left out. */
const listOf = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

function locationOf(s: SourceSummary): string {
  if (s.kind === 'folder') return s.path ?? '';
  if (s.kind === 'web') return s.sitemap ?? `${s.urls?.length ?? 0} URLs`;
  return `${s.endpoint ?? ''}/${s.bucket ?? ''}/${s.prefix ?? ''}`;
}

function Counts(props: { run: SourceRun }) {
  const c = props.run.counts;
  return (
    <span class="small">
      seen {c.seen} · created {c.created} · updated {c.updated} · unchanged {c.unchanged} · deleted {c.deleted} · failed{' '}
      {c.failed}
      {c.deletions_held > 0 && <strong> · deletions held {c.deletions_held}</strong>}
    </span>
  );
}

function SourceDetail(props: { source: SourceSummary }) {
  const [runs, setRuns] = useState<SourceRun[] | null>(null);
  const [docs, setDocs] = useState<DocumentItem[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = props.source.id;
  const loadDocs = () =>
    api<{ documents: DocumentItem[] }>(
      'GET',
      `/api/v1/documents?source=${encodeURIComponent(props.source.name)}&limit=20`,
    ).then(
      (r) => setDocs(r.documents),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    api<{ runs: SourceRun[] }>('GET', `/api/v1/sources/${id}/runs?limit=5`).then(
      (r) => setRuns(r.runs),
      (e) => setError(errorText(e)),
    );
    void loadDocs();
  }, [id, props.source.last_run?.status, props.source.last_run?.finished_at]);
  // A document of this source finished, failed or went: its status in the list changed.
  useLiveRefresh(
    (event) => event.type.startsWith('document.') && event.data.source === props.source.name,
    () => void loadDocs(),
  );
  return (
    <div class="source-detail">
      {error && <Notice kind="error">{error}</Notice>}
      <h3>Last runs</h3>
      {!runs ? (
        <Loading />
      ) : runs.length === 0 ? (
        <Empty>No run yet.</Empty>
      ) : (
        <DataTable caption={`Last runs of ${props.source.name}`} columns={['Started', 'Status', 'Counts', 'Errors']}>
          {runs.map((run) => (
            <tr key={run.run_id}>
              <td>{dateTime(run.started_at)}</td>
              <td>
                <span class={`badge badge-${run.status === 'running' ? 'processing' : run.status}`}>{run.status}</span>
              </td>
              <td>
                <Counts run={run} />
              </td>
              <td>
                {run.errors.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="run-errors">
                    {run.errors.map((e) => (
                      <li key={`${e.item}-${e.code}`}>
                        <code>{e.item ?? 'run'}</code>: {e.code} — {e.detail}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <h3>Documents</h3>
      {!docs ? (
        <Loading />
      ) : docs.length === 0 ? (
        <Empty>No document of this source yet.</Empty>
      ) : (
        <ul class="source-documents">
          {docs.map((d) => (
            <li key={d.document_id}>
              <Link href={`/documents/${d.document_id}`}>{d.source_item ?? d.name}</Link>{' '}
              <span class="muted small">
                v{d.version} · {d.status}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function SourcesPage() {
  const [sources, setSources] = useState<SourceSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [form, setForm] = useState({
    name: '',
    kind: 'folder' as Kind,
    path: '',
    urls: '',
    sitemap: '',
    endpoint: '',
    bucket: '',
    prefix: '',
    accessKey: '',
    secretKey: '',
    include: '',
    exclude: '',
    schedule: '',
  });

  const load = () =>
    api<{ sources: SourceSummary[] }>('GET', '/api/v1/sources').then(
      (r) => setSources(r.sources),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);
  // A sync run finished (completed or failed): read the sources again.
  const live = useLiveRefresh(
    (event) => event.type.startsWith('source.sync.'),
    () => void load(),
  );

  const set = (field: keyof typeof form) => (e: Event) =>
    setForm({ ...form, [field]: (e.currentTarget as HTMLInputElement).value });

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setMessage(null);
    const location =
      form.kind === 'folder'
        ? { path: form.path }
        : form.kind === 'web'
          ? form.sitemap.trim()
            ? { sitemap: form.sitemap.trim() }
            : { urls: listOf(form.urls) }
          : {
              endpoint: form.endpoint,
              bucket: form.bucket,
              ...(form.prefix ? { prefix: form.prefix } : {}),
              ...(form.accessKey ? { access_key: form.accessKey, secret_key: form.secretKey } : {}),
            };
    try {
      const created = await api<SourceSummary>('POST', '/api/v1/sources', {
        name: form.name,
        kind: form.kind,
        ...location,
        ...(form.include.trim() ? { include: listOf(form.include) } : {}),
        ...(form.exclude.trim() ? { exclude: listOf(form.exclude) } : {}),
        ...(form.schedule.trim() ? { schedule: form.schedule.trim() } : {}),
      });
      setForm({ ...form, name: '', accessKey: '', secretKey: '' });
      await load();
      setMessage(`Source “${created.name}” created. Sync it now to bring its documents in.`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const sync = async (source: SourceSummary) => {
    setError(null);
    setMessage(null);
    try {
      await api('POST', `/api/v1/sources/${source.id}/sync`);
      setOpen(source.id);
      await load();
      setMessage(`Sync of “${source.name}” started.`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section>
      <h1>Sources</h1>
      <p class="muted">
        Folders, web pages and S3 buckets kept in sync with the knowledge base. Every change at the source becomes a new
        version of its document.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {message && <Notice kind="ok">{message}</Notice>}
      {live === 'down' && <LiveDown />}
      {!sources ? (
        error ? null : (
          <Loading />
        )
      ) : sources.length === 0 ? (
        <Empty>No source yet: create one below.</Empty>
      ) : (
        <DataTable caption="Sources" columns={['Name', 'Kind', 'Location', 'Schedule', 'Last run', '']}>
          {sources.map((s) => [
            <tr key={s.id}>
              <td>
                <button
                  type="button"
                  class="link"
                  aria-expanded={open === s.id}
                  onClick={() => setOpen(open === s.id ? null : s.id)}
                >
                  {s.name}
                </button>
              </td>
              <td>{s.kind}</td>
              <td>
                <code class="small location">{locationOf(s)}</code>
              </td>
              <td>{s.schedule ?? 'manual'}</td>
              <td>
                <span
                  class={`badge badge-${s.status === 'running' ? 'processing' : s.status === 'never_synced' ? 'pending' : s.status}`}
                >
                  {s.status.replace('_', ' ')}
                </span>{' '}
                {s.last_run && <Counts run={s.last_run} />}
              </td>
              <td>
                <button type="button" class="primary" disabled={s.status === 'running'} onClick={() => sync(s)}>
                  Sync now
                </button>
              </td>
            </tr>,
            open === s.id && (
              <tr key={`${s.id}-detail`}>
                <td colSpan={6}>
                  <SourceDetail source={s} />
                </td>
              </tr>
            ),
          ])}
        </DataTable>
      )}
      <form class="card inline-form" onSubmit={create} aria-labelledby="create-source-title">
        <h2 id="create-source-title">Create a source</h2>
        <label>
          Name
          <input required maxLength={128} value={form.name} onInput={set('name')} />
        </label>
        <label>
          Kind
          <select value={form.kind} onChange={set('kind')}>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        {form.kind === 'folder' && (
          <label>
            Folder on the server
            <input required value={form.path} onInput={set('path')} placeholder="/srv/shared/handbook" />
          </label>
        )}
        {form.kind === 'web' && (
          <>
            <label>
              Pages (one URL a line)
              <textarea rows={3} value={form.urls} onInput={set('urls')} />
            </label>
            <label>
              or a sitemap
              <input type="url" value={form.sitemap} onInput={set('sitemap')} />
            </label>
          </>
        )}
        {form.kind === 's3' && (
          <>
            <label>
              Endpoint
              <input required type="url" value={form.endpoint} onInput={set('endpoint')} />
            </label>
            <label>
              Bucket
              <input required value={form.bucket} onInput={set('bucket')} />
            </label>
            <label>
              Prefix
              <input value={form.prefix} onInput={set('prefix')} />
            </label>
            <label>
              Access key
              <input value={form.accessKey} onInput={set('accessKey')} autoComplete="off" />
            </label>
            <label>
              Secret key
              <input type="password" value={form.secretKey} onInput={set('secretKey')} autoComplete="off" />
            </label>
          </>
        )}
        <label>
          Include (globs, comma-separated)
          <input value={form.include} onInput={set('include')} placeholder="**/*.md" />
        </label>
        <label>
          Exclude
          <input value={form.exclude} onInput={set('exclude')} placeholder="drafts/**" />
        </label>
        <label>
          Schedule (ISO 8601 duration)
          <input value={form.schedule} onInput={set('schedule')} placeholder="PT15M" />
        </label>
        <button type="submit" class="primary">
          Create
        </button>
      </form>
    </section>
  );
}
