import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { FALLBACK_POLL_MS, isDocumentOrSourceEvent, useLiveRefresh } from '../live-events.ts';
import { Link } from '../router.tsx';
import type { Account, IngestError } from '../types.ts';

interface DeadLetterCount {
  stage: string;
  total: number;
  pending: number;
}

interface DeadLetter {
  id: string;
  stage: string;
  document_id: string | null;
  version: number | null;
  error_code: string;
  error_message: string;
  dead_lettered_at: string;
}

interface Overview {
  stages: { stage: string; topic: string; uncommitted: number | null }[];
  documents: Record<string, number>;
  failed: { document_id: string; name: string; version: number; error: IngestError | null; updated_at: string }[];
  readiness: {
    status: string;
    timestamp: string;
    checks: Record<string, { status: string; latency_ms: number | null; message: string }>;
  };
  dead_letters: DeadLetterCount[] | null;
}

/** Events of a busy workspace come many a second: the overview is read at most this often. */
const COALESCE_MS = 1000;

export function PipelinePage(props: { account: Account }) {
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState<Date | null>(null);
  const [letters, setLetters] = useState<DeadLetter[] | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [replayed, setReplayed] = useState<string | null>(null);
  const generation = useRef(0);
  const owner = props.account.role === 'owner';

  const load = () => {
    const mine = ++generation.current;
    return api<Overview>('GET', '/dashboard/api/pipeline').then(
      (r) => {
        if (mine !== generation.current) return;
        setData(r);
        setAt(new Date());
        setError(null);
        if (owner && (r.dead_letters ?? []).some((c) => c.pending > 0)) void loadLetters();
        else setLetters([]);
      },
      (e) => mine === generation.current && setError(errorText(e)),
    );
  };
  /** The pending dead letters themselves: an owner's view (the API answers owners only). */
  const loadLetters = () =>
    api<{ dead_letters: DeadLetter[] }>('GET', '/api/v1/admin/dead-letters?state=pending').then(
      (r) => setLetters(r.dead_letters),
      (e) => setError(errorText(e)),
    );
  const replay = async () => {
    setConfirming(false);
    setReplayed(null);
    try {
      const r = await api<{ replayed: number; skipped: number }>('POST', '/api/v1/admin/dead-letters/replay', {});
      setReplayed(
        `Replayed ${r.replayed} dead letter${r.replayed === 1 ? '' : 's'}` +
          (r.skipped > 0 ? `; ${r.skipped} had nothing left to re-drive (the version completed or is gone)` : '') +
          '.',
      );
      await load();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const pending = (data?.dead_letters ?? []).reduce((sum, c) => sum + c.pending, 0);
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
          <h2>Dead letters</h2>
          {replayed && <Notice kind="ok">{replayed}</Notice>}
          {!data.dead_letters ? (
            <p class="muted">The dead-letter topics could not be read.</p>
          ) : (
            <>
              <DataTable
                caption="Dead letters of this workspace per stage"
                columns={['Stage', 'Waiting for a replay', 'Retained']}
              >
                {data.dead_letters.map((c) => (
                  <tr key={c.stage}>
                    <td>{c.stage}</td>
                    <td>{c.pending}</td>
                    <td>{c.total}</td>
                  </tr>
                ))}
              </DataTable>
              <p class="muted small">
                Events a stage gave up on (a file that can never be processed). Once the cause is fixed, a replay sends
                each one back to its stage once; the document goes back to processing.
              </p>
              {owner && pending > 0 && (
                <>
                  {letters && letters.length > 0 && (
                    <ul class="failed dead-letters">
                      {letters.map((l) => (
                        <li key={l.id}>
                          {l.document_id ? (
                            <Link href={`/documents/${l.document_id}`}>{l.document_id}</Link>
                          ) : (
                            'an event without a document'
                          )}{' '}
                          ({l.stage}, {dateTime(l.dead_lettered_at)})
                          <p class="error-text small">
                            {l.error_message} ({l.error_code})
                          </p>
                        </li>
                      ))}
                    </ul>
                  )}
                  <button type="button" class="primary" onClick={() => setConfirming(true)}>
                    Replay {pending} dead letter{pending === 1 ? '' : 's'}
                  </button>
                </>
              )}
              {!owner && pending > 0 && <p class="muted">Only an owner of the workspace can replay dead letters.</p>}
              {confirming && (
                <ConfirmDialog
                  title="Replay dead letters"
                  confirmLabel="Replay"
                  onConfirm={() => void replay()}
                  onCancel={() => setConfirming(false)}
                >
                  <p>
                    Send {pending} dead letter{pending === 1 ? '' : 's'} of this workspace back to{' '}
                    {pending === 1 ? 'its' : 'their'} stage? Their documents go back to processing. Each dead letter is
                    replayed once.
                  </p>
                </ConfirmDialog>
              )}
            </>
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
