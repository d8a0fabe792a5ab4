import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { SecretReveal } from '../components/secret-reveal.tsx';
import { type FollowedDelivery, WebhookDeliveries } from '../components/webhook-deliveries.tsx';
import { dateTime } from '../format.ts';
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from '../live-events.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../types.ts';

const path = (id: string) => `/api/v1/webhooks/${encodeURIComponent(id)}`;

const eventsText = (events: readonly string[]) => (events.includes('*') ? 'all events' : events.join(', '));

function EndpointStatus(props: { endpoint: WebhookEndpoint }) {
  const e = props.endpoint;
  if (!e.enabled) {
    return (
      <>
        <span class="badge badge-failed">disabled</span>
        {e.disabled_reason && <p class="small muted">{e.disabled_reason}</p>}
      </>
    );
  }
  return (
    <>
      <span class="badge badge-completed">enabled</span>
      {e.failing_since && <p class="error-text small">Every delivery has failed since {dateTime(e.failing_since)}.</p>}
    </>
  );
}

/** Settings › Webhooks: the workspace's endpoints, their secrets (shown once) and their deliveries. */
export function WebhooksPage() {
  const [hooks, setHooks] = useState<WebhookEndpoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState<string[]>([]);
  const [revealed, setRevealed] = useState<{ title: string; secret: string } | null>(null);
  const [confirm, setConfirm] = useState<{ action: 'delete' | 'rotate'; hook: WebhookEndpoint } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [follow, setFollow] = useState<FollowedDelivery | null>(null);

  const load = () =>
    api<{ webhooks: WebhookEndpoint[] }>('GET', '/api/v1/webhooks').then(
      (r) => setHooks(r.webhooks),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);

  /**
   * Runs a change; on success reads the list again and then says `done` (if any), so that the message
   * never stands beside a list that does not show the change yet; on failure shows the problem.
   */
  const act = async <T,>(run: () => Promise<T>, done?: (result: T) => string | null): Promise<void> => {
    setError(null);
    setMessage(null);
    try {
      const result = await run();
      await load();
      setMessage(done?.(result) ?? null);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const create = (e: Event) => {
    e.preventDefault();
    return act(
      () =>
        api<WebhookEndpoint>('POST', '/api/v1/webhooks', {
          url: url.trim(),
          events: all ? ['*'] : events,
          ...(description.trim() ? { description: description.trim() } : {}),
        }),
      (created) => {
        setRevealed({ title: `Endpoint ${created.url} added`, secret: created.secret ?? '' });
        setUrl('');
        setDescription('');
        return null;
      },
    );
  };

  const sendTest = (hook: WebhookEndpoint) =>
    act(
      () => api<WebhookDelivery>('POST', `${path(hook.id)}/test`),
      (delivery) => {
        setShown(hook.id);
        setFollow({ deliveryId: delivery.id, afterAttempts: 0 });
        return `A webhook.test event is on its way to ${hook.url}; its delivery is listed below.`;
      },
    );

  const setEnabled = (hook: WebhookEndpoint, enabled: boolean) =>
    act(
      () => api<WebhookEndpoint>('PATCH', path(hook.id), { enabled }),
      () =>
        enabled
          ? `${hook.url} is enabled again; new events are delivered to it.`
          : `${hook.url} is disabled; it gets no deliveries until it is enabled.`,
    );

  const rotate = (hook: WebhookEndpoint) =>
    act(
      () => api<WebhookEndpoint>('PATCH', path(hook.id), { rotate_secret: true }),
      (updated) => {
        setRevealed({ title: `New signing secret of ${hook.url}`, secret: updated.secret ?? '' });
        return 'The secret is replaced: deliveries from now on are signed with the new one.';
      },
    );

  const remove = (hook: WebhookEndpoint) =>
    act(
      () => api('DELETE', path(hook.id)),
      () => {
        if (shown === hook.id) setShown(null);
        return `${hook.url} is removed; its pending deliveries are given up.`;
      },
    );

  const shownHook = hooks?.find((h) => h.id === shown) ?? null;

  return (
    <section>
      <h1>Settings › Webhooks</h1>
      <p class="muted">
        The service POSTs this workspace's events to these URLs, signed per Standard Webhooks (headers{' '}
        <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) with the endpoint's
        secret, and retries failed deliveries for about a day.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {message && <Notice kind="ok">{message}</Notice>}
      {revealed && (
        <SecretReveal
          title={revealed.title}
          secret={revealed.secret}
          testId="webhook-secret"
          onDone={() => setRevealed(null)}
        >
          <p class="small">
            Verify each delivery with a Standard Webhooks library, e.g. in Node{' '}
            <code>new Webhook(secret).verify(body, headers)</code> from the <code>standardwebhooks</code> package.
          </p>
        </SecretReveal>
      )}
      <form class="card inline-form" onSubmit={create} aria-labelledby="create-webhook-title">
        <h2 id="create-webhook-title">Add an endpoint</h2>
        <label class="grow">
          URL
          <input
            type="url"
            required
            maxLength={2048}
            placeholder="https://example.com/kb-events"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          Description
          <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Events</legend>
          <label class="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
            All events (also types added later)
          </label>
          {EVENT_TYPES.map((type) => (
            <label key={type} class="check" title={EVENT_DESCRIPTIONS[type]}>
              <input
                type="checkbox"
                disabled={all}
                checked={all || events.includes(type)}
                onChange={(e) =>
                  setEvents(e.currentTarget.checked ? [...events, type] : events.filter((x) => x !== type))
                }
              />
              {type}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={!all && events.length === 0}>
          Add endpoint
        </button>
      </form>
      {hooks === null ? (
        error ? null : (
          <Loading />
        )
      ) : hooks.length === 0 ? (
        <Empty>No webhook endpoint in this workspace yet.</Empty>
      ) : (
        <DataTable
          caption="Webhook endpoints of this workspace"
          columns={['URL', 'Events', 'Status', 'Description', 'Created', 'Actions']}
        >
          {hooks.map((h) => (
            <tr key={h.id} data-webhook-id={h.id}>
              <td>
                <code class="small">{h.url}</code>
              </td>
              <td>{eventsText(h.events)}</td>
              <td>
                <EndpointStatus endpoint={h} />
              </td>
              <td>{h.description ?? '—'}</td>
              <td>{dateTime(h.created_at)}</td>
              <td class="row-actions">
                <button
                  type="button"
                  aria-pressed={shown === h.id}
                  onClick={() => {
                    setShown(h.id);
                    setFollow(null);
                  }}
                >
                  Deliveries<span class="sr-only"> to {h.url}</span>
                </button>
                {h.enabled && (
                  <button type="button" onClick={() => sendTest(h)}>
                    Send test<span class="sr-only"> to {h.url}</span>
                  </button>
                )}
                <button type="button" onClick={() => setEnabled(h, !h.enabled)}>
                  {h.enabled ? 'Disable' : 'Enable'}
                  <span class="sr-only"> {h.url}</span>
                </button>
                <button type="button" onClick={() => setConfirm({ action: 'rotate', hook: h })}>
                  Rotate secret<span class="sr-only"> of {h.url}</span>
                </button>
                <button type="button" class="danger" onClick={() => setConfirm({ action: 'delete', hook: h })}>
                  Delete<span class="sr-only"> {h.url}</span>
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {shownHook && (
        <WebhookDeliveries
          key={shownHook.id}
          endpoint={shownHook}
          follow={follow}
          onFollow={setFollow}
          onError={setError}
          onClose={() => setShown(null)}
        />
      )}
      {confirm && (
        <ConfirmDialog
          title={confirm.action === 'delete' ? 'Delete this endpoint?' : 'Rotate the signing secret?'}
          confirmLabel={confirm.action === 'delete' ? 'Delete endpoint' : 'Rotate secret'}
          danger
          onCancel={() => setConfirm(null)}
          onConfirm={() => {
            const { action, hook } = confirm;
            setConfirm(null);
            void (action === 'delete' ? remove(hook) : rotate(hook));
          }}
        >
          {confirm.action === 'delete' ? (
            <p>
              <code>{confirm.hook.url}</code> gets no more events, and its pending deliveries are given up. This cannot
              be undone.
            </p>
          ) : (
            <p>
              Deliveries to <code>{confirm.hook.url}</code> are signed with a new secret from now on; the receiver must
              use it to verify them. The current secret stops working at once.
            </p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}
