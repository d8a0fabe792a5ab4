import { useEffect, useState } from 'preact/hooks';
import { api, errorText, uploadWithProgress } from '../api.ts';
import { useActorNames } from '../components/actor-names.ts';
import { ChunkDiff } from '../components/chunk-diff.tsx';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Empty, LiveDown, Loading, Notice, StatusBadge } from '../components/feedback.tsx';
import { bytes, dateTime } from '../format.ts';
import { useLiveRefresh } from '../live-events.ts';
import { Link } from '../router.tsx';
import type { Account, Chunk, Compare, DocumentDetail, Version } from '../types.ts';

function NewVersion(props: { id: string; onDone: (version: number) => void; onError: (e: string) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [reason, setReason] = useState('');
  const [progress, setProgress] = useState<number | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const formElement = e.currentTarget as HTMLFormElement;
    if (!file) return;
    const form = new FormData();
    if (reason.trim()) form.append('change_reason', reason.trim());
    form.append('file', file, file.name);
    setProgress(0);
    try {
      const doc = await uploadWithProgress<DocumentDetail>('PUT', `/api/v1/documents/${props.id}`, form, setProgress);
      props.onDone(doc.version);
      formElement.reset();
      setFile(null);
      setReason('');
    } catch (err) {
      props.onError(errorText(err));
    } finally {
      setProgress(null);
    }
  };
  return (
    <form class="card inline-form" onSubmit={submit} aria-labelledby="new-version-title">
      <h2 id="new-version-title">Upload a new version</h2>
      <label>
        File
        <input type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      </label>
      <label>
        Change reason
        <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={!file || progress !== null}>
        Upload version
      </button>
      {progress !== null && <progress max={1} value={progress} aria-label="Upload progress" />}
    </form>
  );
}

/**
 * The metadata of the latest version as editable JSON: saving makes a new version with it (PATCH),
 * served at once when the latest version's chunks and vectors can be reused, else ingested again.
 */
function MetadataEditor(props: {
  id: string;
  metadata: Record<string, unknown>;
  onDone: (doc: DocumentDetail) => void;
  onError: (e: string) => void;
}) {
  const [text, setText] = useState(JSON.stringify(props.metadata, null, 2));
  const [reason, setReason] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  useEffect(() => setText(JSON.stringify(props.metadata, null, 2)), [JSON.stringify(props.metadata)]);
  const submit = async (e: Event) => {
    e.preventDefault();
    let metadata: unknown;
    try {
      metadata = JSON.parse(text);
    } catch (err) {
      setInvalid(`The metadata is not valid JSON: ${(err as Error).message}`);
      return;
    }
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
      setInvalid('The metadata must be a JSON object, such as {"team": "docs"}.');
      return;
    }
    setInvalid(null);
    setSaving(true);
    try {
      const body = { metadata, ...(reason.trim() ? { change_reason: reason.trim() } : {}) };
      props.onDone(await api<DocumentDetail>('PATCH', `/api/v1/documents/${props.id}`, body));
      setReason('');
    } catch (err) {
      props.onError(errorText(err));
    } finally {
      setSaving(false);
    }
  };
  return (
    <form class="card inline-form" onSubmit={submit} aria-labelledby="metadata-title">
      <h2 id="metadata-title">Edit the metadata</h2>
      <label>
        Metadata (JSON object)
        <textarea
          rows={Math.min(12, Math.max(3, text.split('\n').length))}
          spellcheck={false}
          value={text}
          aria-invalid={invalid !== null}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <label>
        Why (optional)
        <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
      {invalid && (
        <p class="error-text" role="alert">
          {invalid}
        </p>
      )}
      <button type="submit" class="primary" disabled={saving}>
        Save metadata
      </button>
    </form>
  );
}

function Chunks(props: { id: string; version: number; focus?: string | null }) {
  const [chunks, setChunks] = useState<Chunk[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setChunks(null);
    api<{ chunks: Chunk[] }>('GET', `/api/v1/chunks/${props.id}?version=${props.version}&limit=100`).then(
      (r) => setChunks(r.chunks),
      (e) => setError(errorText(e)),
    );
  }, [props.id, props.version]);
  useEffect(() => {
    if (chunks && props.focus) document.getElementById(`chunk-${props.focus}`)?.scrollIntoView({ block: 'center' });
  }, [chunks, props.focus]);
  if (error) return <Notice kind="error">{error}</Notice>;
  if (!chunks) return <Loading />;
  if (chunks.length === 0) return <Empty>Version {props.version} has no chunks (yet).</Empty>;
  return (
    <ol class="chunks" start={0}>
      {chunks.map((c) => (
        <li key={c.id} id={`chunk-${c.id}`} class={c.id === props.focus ? 'focused' : undefined}>
          <p class="muted small">
            Chunk {c.index} · {c.tokens} tokens{c.page !== null ? ` · page ${c.page}` : ''}
          </p>
          <p class="chunk-text">{c.content}</p>
        </li>
      ))}
    </ol>
  );
}

function VersionSelect(props: {
  label: string;
  versions: Version[];
  value: number | null;
  onChange: (version: number) => void;
}) {
  return (
    <label>
      {props.label}
      <select value={String(props.value)} onChange={(e) => props.onChange(Number(e.currentTarget.value))}>
        {props.versions.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
          </option>
        ))}
      </select>
    </label>
  );
}

function ExtractedText(props: { id: string; version: number }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(null);
    setError(null);
    api<{ content: string }>('GET', `/api/v1/chunks/${props.id}/context?version=${props.version}`).then(
      (r) => setText(r.content),
      (e) => setError(errorText(e)),
    );
  }, [props.id, props.version]);
  if (error) return <Notice kind="error">{error}</Notice>;
  if (text === null) return <Loading />;
  return text ? <pre class="extracted">{text}</pre> : <Empty>No text was extracted.</Empty>;
}

export function DocumentPage(props: { id: string; query: URLSearchParams; account: Account }) {
  const { id } = props;
  const actorName = useActorNames(props.account);
  const [doc, setDoc] = useState<DocumentDetail | null>(null);
  const [versions, setVersions] = useState<Version[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const [compare, setCompare] = useState<Compare | null>(null);
  const [shown, setShown] = useState<number | null>(null);
  const [view, setView] = useState<'chunks' | 'text'>('chunks');
  const [rollback, setRollback] = useState<number | null>(null);
  /** The version the page said is being ingested, until it completes or fails. */
  const [ingesting, setIngesting] = useState<number | null>(null);

  const load = async () => {
    try {
      const [d, v] = await Promise.all([
        api<DocumentDetail>('GET', `/api/v1/documents/${id}`),
        api<{ versions: Version[] }>('GET', `/api/v1/documents/${id}/versions`),
      ]);
      setDoc(d);
      setVersions(v.versions);
      setError(null);
      return { d, v: v.versions };
    } catch (err) {
      setError(errorText(err));
      return null;
    }
  };

  useEffect(() => {
    void load().then((r) => {
      if (!r) return;
      const newest = r.v[0]?.version ?? r.d.version;
      setTo(newest);
      setFrom(r.v[1]?.version ?? newest);
      const asked = Number(props.query.get('version'));
      setShown(r.v.some((v) => v.version === asked) ? asked : (r.d.served_version ?? newest));
    });
  }, [id]);

  // An event about this document (a version finished or failed, it was deleted): read it again.
  const live = useLiveRefresh(
    (event) => event.type.startsWith('document.') && event.data.document_id === id,
    () => void load(),
  );

  // A version announced as being ingested: say so once it is served, and show it; clear on failure.
  useEffect(() => {
    if (ingesting === null || !doc || doc.version < ingesting) return;
    if (doc.status === 'completed') {
      setMessage(`Version ${ingesting} is ingested; searches serve it now.`);
      setShown(doc.served_version ?? doc.version);
      setIngesting(null);
    } else if (doc.status === 'failed') {
      setMessage(null);
      setIngesting(null);
    }
  }, [doc, ingesting]);

  /** After a write: the message, fresh data, and every selection moved off what the write made stale. */
  const refreshAfter = async (text: string, pendingVersion: number | null = null) => {
    setMessage(text);
    setError(null);
    setIngesting(pendingVersion);
    setCompare(null);
    const r = await load();
    if (r) {
      setTo(r.v[0]?.version ?? null);
      setFrom(r.v[1]?.version ?? null);
      setShown(r.d.served_version ?? r.d.version);
    }
  };

  const runCompare = async (e: Event) => {
    e.preventDefault();
    if (from === null || to === null) return;
    setCompare(null);
    try {
      setCompare(await api<Compare>('GET', `/api/v1/documents/${id}/versions/compare?from=${from}&to=${to}`));
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const doRollback = async (target: number) => {
    setRollback(null);
    try {
      const r = await api<{ version: number }>('POST', `/api/v1/documents/${id}/rollback`, { target_version: target });
      await refreshAfter(`Rolled back: version ${r.version} has the content of version ${target}.`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  // The panel reloads when the shown version's status changes (e.g. it finishes ingesting).
  const shownStatus = versions.find((v) => v.version === shown)?.status ?? '';

  if (!doc) {
    return (
      <section>
        <p>
          <Link href="/documents">← Documents</Link>
        </p>
        {error ? <Notice kind="error">{error}</Notice> : <Loading />}
      </section>
    );
  }

  return (
    <section>
      <p>
        <Link href="/documents">← Documents</Link>
      </p>
      <h1>
        {doc.name} <StatusBadge status={doc.status} />
      </h1>
      {error && <Notice kind="error">{error}</Notice>}
      {message && <Notice kind="ok">{message}</Notice>}
      {live === 'down' && <LiveDown />}
      {doc.status === 'failed' && doc.error && (
        <Notice kind="error">
          Ingestion failed in {doc.error.stage} after {doc.error.attempts} attempt(s): {doc.error.message} (
          {doc.error.code}){' '}
          <button
            type="button"
            onClick={() =>
              api('POST', `/api/v1/documents/${id}/reprocess`).then(
                () => refreshAfter('Reprocessing.'),
                (e) => setError(errorText(e)),
              )
            }
          >
            Reprocess
          </button>
        </Notice>
      )}
      <dl class="meta">
        <dt>Document id</dt>
        <dd>
          <code>{doc.document_id}</code>
        </dd>
        <dt>Version</dt>
        <dd>
          {doc.version}
          {doc.served_version !== null &&
            doc.served_version !== doc.version &&
            ` (searches serve ${doc.served_version})`}
        </dd>
        <dt>Type and size</dt>
        <dd>
          {doc.mime_type}, {bytes(doc.size_bytes)}
        </dd>
        <dt>Chunks and tokens</dt>
        <dd>
          {doc.stats.chunks} chunks, {doc.stats.tokens} tokens
        </dd>
        <dt>Source</dt>
        <dd>{doc.source}</dd>
        <dt>Created</dt>
        <dd>{dateTime(doc.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{dateTime(doc.updated_at)}</dd>
        <dt>Metadata</dt>
        <dd>
          {Object.keys(doc.metadata).length === 0 ? (
            'none'
          ) : (
            <pre class="json">{JSON.stringify(doc.metadata, null, 2)}</pre>
          )}
        </dd>
      </dl>
      <p>
        <Link href={`/audit?document_id=${doc.document_id}`}>Audit entries of this document</Link>
      </p>

      <NewVersion
        id={id}
        onDone={(v) => void refreshAfter(`Version ${v} uploaded; it is being ingested.`, v)}
        onError={setError}
      />
      <MetadataEditor
        id={id}
        metadata={doc.metadata}
        onDone={(d) =>
          void refreshAfter(
            d.status === 'completed'
              ? `Metadata saved as version ${d.version}; searches serve it now.`
              : `Metadata saved as version ${d.version}; it is being ingested.`,
            d.status === 'completed' ? null : d.version,
          )
        }
        onError={setError}
      />

      <h2>Versions</h2>
      <DataTable
        caption="Version history, newest first"
        columns={['Version', 'Change reason', 'Status', 'Author', 'Size', 'Chunks', 'Created', 'Actions']}
      >
        {versions.map((v) => (
          <tr key={v.version}>
            <td class="version-number">
              {v.version}
              {v.restored_from !== null && <span class="muted small"> (from {v.restored_from})</span>}
            </td>
            <td class="change-reason">{v.change_reason ?? '—'}</td>
            <td>
              <StatusBadge status={v.status} />
            </td>
            <td>{actorName(v.created_by)}</td>
            <td>{bytes(v.size_bytes)}</td>
            <td>{v.chunk_count}</td>
            <td>{dateTime(v.created_at)}</td>
            <td class="row-actions">
              <button type="button" onClick={() => setShown(v.version)}>
                Show<span class="sr-only"> version {v.version}</span>
              </button>
              {v.version !== doc.version && (
                <button type="button" onClick={() => setRollback(v.version)}>
                  Roll back to {v.version}
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>

      <h2>Compare versions</h2>
      {versions.length < 2 ? (
        <Empty>There is only one version so far.</Empty>
      ) : (
        <form class="filters" onSubmit={runCompare} aria-label="Compare two versions">
          <VersionSelect label="From version" versions={versions} value={from} onChange={setFrom} />
          <VersionSelect label="To version" versions={versions} value={to} onChange={setTo} />
          <button type="submit" class="primary">
            Compare
          </button>
        </form>
      )}
      {compare && <ChunkDiff compare={compare} />}

      {shown !== null && (
        <>
          <h2>Version {shown}</h2>
          <fieldset class="tabs">
            <legend class="sr-only">What to show</legend>
            <button type="button" aria-pressed={view === 'chunks'} onClick={() => setView('chunks')}>
              Chunks
            </button>
            <button type="button" aria-pressed={view === 'text'} onClick={() => setView('text')}>
              Extracted text
            </button>
          </fieldset>
          {view === 'chunks' ? (
            <Chunks key={`${shown}:${shownStatus}`} id={id} version={shown} focus={props.query.get('chunk')} />
          ) : (
            <ExtractedText key={`${shown}:${shownStatus}`} id={id} version={shown} />
          )}
        </>
      )}

      {rollback !== null && (
        <ConfirmDialog
          title={`Roll back to version ${rollback}?`}
          confirmLabel="Roll back"
          onCancel={() => setRollback(null)}
          onConfirm={() => doRollback(rollback)}
        >
          <p>
            A new version {doc.version + 1} is made with the content, chunks and vectors of version {rollback}. The
            history keeps every version.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
