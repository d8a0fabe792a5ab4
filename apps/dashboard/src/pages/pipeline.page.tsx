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
  backlog: Backlog | null;
}

interface Backlog {
  workspace: number;
  total: number;
  max_per_workspace: number;
  max_total: number;
  workspace_drain_per_second: number;
  drain_per_second: number;
}

/** `n of at most max`, or `n` when there is no bound. */
const ofBound = (n: number, max: number) => (max > 0 ? `${n} of at most ${max}` : `${n} (no bound)`);
const perSecond = (rate: number) => `${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)} a second`;

function BacklogSection(props: { backlog: Backlog | null }) {
  const b = props.backlog;
  if (!b) return <p class="muted">The ingestion backlog could not be counted.</p>;
  const full =
    (b.max_per_workspace > 0 && b.workspace >= b.max_per_workspace) || (b.max_total > 0 && b.total >= b.max_total);
  return (
    <>
      {full && (
        <Notice kind="error">
          The backlog is at its bound: uploads, new content and reprocessing are refused with 429 (or 503) and a
          Retry-After until ingestion catches up. Searches, reads, metadata changes and deletes go on.
        </Notice>
      )}
      <DataTable caption="Ingestion backlog" columns={['Scope', 'Versions waiting for ingestion', 'Completed lately']}>
        <tr>
          <td>This workspace</td>
          <td>{ofBound(b.workspace, b.max_per_workspace)}</td>
          <td>{perSecond(b.workspace_drain_per_second)}</td>
        </tr>
        <tr>
          <td>All workspaces</td>
          <td>{ofBound(b.total, b.max_total)}</td>
          <td>{perSecond(b.drain_per_second)}</td>
        </tr>
      </DataTable>
      <p class="muted small">
        Versions accepted and not yet completed or failed, and how many completed per second over the last 15 s. At the
        bound, writes that queue ingestion wait: clients retry after the Retry-After the service derives from that rate.
      </p>
    </>
  );
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
          <h2>Ingestion backlog</h2>
          <BacklogSection backlog={data.backlog} />
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
