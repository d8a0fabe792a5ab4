import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
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

const REFRESH_MS = 3000;

export function PipelinePage() {
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState<Date | null>(null);

  useEffect(() => {
    let live = true;
    const load = () =>
      api<Overview>('GET', '/dashboard/api/pipeline').then(
        (r) => {
          if (!live) return;
          setData(r);
          setAt(new Date());
          setError(null);
        },
        (e) => live && setError(errorText(e)),
      );
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);

  return (
    <section>
      <h1>Pipeline</h1>
      <p class="muted" aria-live="polite">
        Refreshes every {REFRESH_MS / 1000} s{at ? ` · last at ${at.toLocaleTimeString()}` : ''}
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
