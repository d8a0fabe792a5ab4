import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { FALLBACK_POLL_MS, isDocumentOrSourceEvent, useLiveRefresh } from '../live-events.ts';
import { Link } from '../router.tsx';
import type { IngestError } from '../types.ts';

interface Overview {
  stages: { stage: string; topic: string; uncommitted: number | null }[];
  documents: Record<string, number>;
  failed: { document_id: string; name: string; version: number; error: IngestError | null; updated_at: string }[];
  readiness: {
    status: string;
    timestamp: string;
    checks: Record<string, { status: string; latency_ms: number | null; message: string }>;
  };
}

/** Events of a busy workspace come many a second: the overview is read at most this often. */
const COALESCE_MS = 1000;

export function PipelinePage() {
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState<Date | null>(null);
  const generation = useRef(0);

  const load = () => {
    const mine = ++generation.current;
    return api<Overview>('GET', '/dashboard/api/pipeline').then(
      (r) => {
        if (mine !== generation.current) return;
        setData(r);
        setAt(new Date());
        setError(null);
      },
      (e) => mine === generation.current && setError(errorText(e)),
    );
  };
  useEffect(() => {
    void load();
    // Answers arriving after the page is left are dropped.
    return () => {
      generation.current += 1;
    };
  }, []);
  // Documents finished, failed or went, a sync ran: the counts changed.
  const live = useLiveRefresh(isDocumentOrSourceEvent, () => void load(), COALESCE_MS);

  return (
    <section>
      <h1>Pipeline</h1>
      <p class="muted" aria-live="polite">
        {live === 'live'
          ? 'Refreshes when documents of this workspace finish, fail or are deleted'
          : `Refreshes every ${FALLBACK_POLL_MS / 1000} s while live updates are unavailable`}
        {at ? ` · last at ${at.toLocaleTimeString()}` : ''}{' '}
        <button type="button" onClick={() => void load()}>
          Refresh now
        </button>
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {!data ? (
        error ? null : (
          <Loading />
        )
      ) : (
        <>
          <h2>Stages</h2>
          <DataTable caption="Messages per stage" columns={['Stage', 'Input topic', 'Messages waiting or in flight']}>
            {data.stages.map((s) => (
              <tr key={s.stage}>
                <td>{s.stage}</td>
                <td>
                  <code>{s.topic}</code>
                </td>
                <td>{s.uncommitted ?? 'unknown'}</td>
              </tr>
            ))}
          </DataTable>
          <p class="muted small">Messages not yet committed by the stage's consumer group, all workspaces together.</p>
          <h2>Documents of this workspace</h2>
          <ul class="counts">
            {Object.entries(data.documents).map(([status, n]) => (
              <li key={status} class={`count count-${status}`}>
                <span class="count-n">{n}</span> {status}
              </li>
            ))}
          </ul>
          <h2>Failed documents</h2>
          {data.failed.length === 0 ? (
            <Empty>No failed documents.</Empty>
          ) : (
            <ul class="failed">
              {data.failed.map((f) => (
                <li key={f.document_id}>
                  <Link href={`/documents/${f.document_id}`}>{f.name}</Link> (version {f.version},{' '}
                  {dateTime(f.updated_at)})
                  {f.error && (
                    <p class="error-text small">
                      {f.error.stage}: {f.error.message} ({f.error.code})
                    </p>
                  )}
                </li>
              ))}
            </ul>
          )}
          <h2>
            Readiness: <span class={`badge badge-${data.readiness.status}`}>{data.readiness.status}</span>
          </h2>
          <DataTable caption="Readiness checks" columns={['Check', 'Status', 'Latency', 'Detail']}>
            {Object.entries(data.readiness.checks).map(([name, c]) => (
              <tr key={name}>
                <td>{name}</td>
                <td>
                  <span class={`badge badge-${c.status}`}>{c.status}</span>
                </td>
                <td>{c.latency_ms === null ? '—' : `${c.latency_ms} ms`}</td>
                <td>{c.message}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
    </section>
  );
}
