import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { dateTime } from '../format.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../types.ts';
import { DataTable } from './data-table.tsx';
import { Empty, Loading } from './feedback.tsx';

/** A delivery just queued (a test, a retry): followed until an attempt beyond `afterAttempts` is recorded. */
export interface FollowedDelivery {
  readonly deliveryId: string;
  readonly afterAttempts: number;
}

/** How long the first re-read of a followed delivery waits; each next one waits twice as long. */
const FOLLOW_FIRST_MS = 250;
/** Re-reads stop after this wait (about 16 s in all); Refresh reads again. */
const FOLLOW_LAST_MS = 8_000;

function Outcome(props: { delivery: WebhookDelivery }) {
  const d = props.delivery;
  const last = d.attempt_log[d.attempt_log.length - 1];
  return (
    <>
      <span class={`badge badge-${d.status === 'delivered' ? 'completed' : d.status}`}>{d.status}</span>{' '}
      {!last ? (
        <span class="muted small">not attempted yet</span>
      ) : last.status_code !== null ? (
        <span class={last.status_code >= 200 && last.status_code < 300 ? undefined : 'error-text'}>
          HTTP {last.status_code}
        </span>
      ) : (
        <span class="error-text small">{last.error ?? 'no answer'}</span>
      )}
    </>
  );
}

/**
 * The deliveries of one endpoint, newest first: when, which event, the last attempt's HTTP status
 * or error and duration, the attempts so far and the next one, and Retry on those that failed.
 */
export function WebhookDeliveries(props: {
  endpoint: WebhookEndpoint;
  follow: FollowedDelivery | null;
  onFollow: (follow: FollowedDelivery) => void;
  onError: (message: string) => void;
  onClose: () => void;
}) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const id = props.endpoint.id;
  const generation = useRef(0);

  const load = async (): Promise<WebhookDelivery[] | null> => {
    const mine = ++generation.current;
    try {
      const r = await api<{ deliveries: WebhookDelivery[] }>(
        'GET',
        `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries?limit=50`,
      );
      if (mine === generation.current) setDeliveries(r.deliveries);
      return r.deliveries;
    } catch (err) {
      props.onError(errorText(err));
      return null;
    }
  };

  useEffect(() => {
    setDeliveries(null);
    void load();
  }, [id]);

  // A delivery just queued: read again, less and less often, until its attempt is recorded.
  useEffect(() => {
    const follow = props.follow;
    if (!follow) return;
    let stopped = false;
    let wait = FOLLOW_FIRST_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const step = async () => {
      const list = await load();
      if (stopped) return;
      const d = list?.find((x) => x.id === follow.deliveryId);
      if (d && (d.attempts > follow.afterAttempts || d.status === 'delivered')) return;
      if (wait > FOLLOW_LAST_MS) return;
      timer = setTimeout(step, wait);
      wait *= 2;
    };
    timer = setTimeout(step, FOLLOW_FIRST_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [props.follow]);

  const retry = async (delivery: WebhookDelivery) => {
    try {
      await api(
        'POST',
        `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery.id)}/retry`,
      );
      props.onFollow({ deliveryId: delivery.id, afterAttempts: delivery.attempts });
    } catch (err) {
      props.onError(errorText(err));
    }
  };

  return (
    <section class="card deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">
        Deliveries to <code class="small">{props.endpoint.url}</code>
      </h2>
      <p class="toolbar">
        <button type="button" onClick={() => void load()}>
          Refresh deliveries
        </button>
        <button type="button" onClick={props.onClose}>
          Close deliveries
        </button>
      </p>
      {deliveries === null ? (
        <Loading />
      ) : deliveries.length === 0 ? (
        <Empty>No delivery yet: events of the chosen types, or a test, show up here.</Empty>
      ) : (
        <DataTable
          caption={`Deliveries to ${props.endpoint.url}, newest first`}
          columns={['Time', 'Event', 'Outcome', 'Duration', 'Attempts', 'Next attempt', 'Action']}
        >
          {deliveries.map((d) => {
            const last = d.attempt_log[d.attempt_log.length - 1];
            const failed = d.status === 'failed' || (d.status === 'pending' && d.attempts > 0);
            return (
              <tr key={d.id} data-delivery-id={d.id}>
                <td>{dateTime(last?.at ?? d.created_at)}</td>
                <td>
                  <code class="small">{d.event_type}</code>
                </td>
                <td>
                  <Outcome delivery={d} />
                </td>
                <td>{last ? `${last.duration_ms} ms` : '—'}</td>
                <td>{d.attempts}</td>
                <td>{dateTime(d.next_attempt_at)}</td>
                <td class="row-actions">
                  {failed && (
                    <button type="button" onClick={() => retry(d)}>
                      Retry<span class="sr-only"> {d.event_type} delivery</span>
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
