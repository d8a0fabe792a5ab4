import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import { SecretReveal } from '../components/secret-reveal.tsx';
import { dateTime } from '../format.ts';
import type { Account, ApiKey } from '../types.ts';

const PERMISSIONS = ['read', 'search', 'write'] as const;
const PLANS = ['starter', 'pro', 'business', 'enterprise'] as const;

function CreatedKey(props: { secret: string; name: string; onDone: () => void }) {
  return (
    <SecretReveal
      title={`Key “${props.name}” created`}
      secret={props.secret}
      testId="new-key"
      noun="key"
      afterwards="afterwards only its prefix is visible"
      onDone={props.onDone}
    >
      <pre class="example">
        curl -H "X-API-Key: {props.secret}" {location.origin}/api/v1/documents
      </pre>
    </SecretReveal>
  );
}

/** How to give an end user a scoped token: minted on the customer's server from a key, never in the browser. */
const MINT_EXAMPLE = (origin: string) =>
  [
    `curl -H "X-API-Key: $KB_KEY" -H 'content-type: application/json' \\`,
    `  -d '{"expires_in":3600,"permissions":["search"],"filters":{"metadata":{"customer":"acme"}}}' \\`,
    `  ${origin}/api/v1/tokens`,
  ].join('\n');
const CLI_EXAMPLE = `kb tokens create --expires-in 3600 --filter '{"metadata":{"customer":"acme"}}'`;

function ScopedTokensHelp() {
  return (
    <details class="card" data-testid="scoped-tokens-help">
      <summary>Search for end users: scoped tokens</summary>
      <p>
        Never put a key in an end user's browser or app. Have your server mint a short-lived token from a key with{' '}
        <code>read</code> or <code>search</code>: it reads and searches only the documents its rules let through
        (metadata, document ids, types, creation dates, sources), never writes, expires, and stops working when the key
        is revoked. Requests with it count against the key's rate limit.
      </p>
      <pre class="example">{MINT_EXAMPLE(location.origin)}</pre>
      <p class="muted">
        The end user's client then sends <code>Authorization: Bearer &lt;token&gt;</code>. From the command line:{' '}
        <code>{CLI_EXAMPLE}</code>; from the clients: <code>createToken</code> (TypeScript), <code>create_token</code>{' '}
        (Python).
      </p>
    </details>
  );
}

export function KeysPage(props: { account: Account }) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<string[]>(['read', 'search']);
  const [plan, setPlan] = useState<string>('starter');
  const [created, setCreated] = useState<{ secret: string; name: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const owner = props.account.role === 'owner';

  const load = () =>
    api<{ keys: ApiKey[] }>('GET', '/dashboard/api/keys').then(
      (r) => setKeys(r.keys),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setMessage(null);
    try {
      const r = await api<{ key: string; record: ApiKey }>('POST', '/dashboard/api/keys', { name, permissions, plan });
      setCreated({ secret: r.key, name: r.record.name });
      setName('');
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const revoke = async (key: ApiKey) => {
    setRevoking(null);
    setError(null);
    try {
      await api('POST', `/dashboard/api/keys/${encodeURIComponent(key.id)}/revoke`);
      await load();
      setMessage(`Key “${key.name}” (${key.prefix}…) is revoked; requests with it now answer 401.`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section>
      <h1>Settings › API keys</h1>
      <p class="muted">Programs use API keys; people sign in. A key belongs to this workspace only.</p>
      {error && <Notice kind="error">{error}</Notice>}
      {message && <Notice kind="ok">{message}</Notice>}
      {created && <CreatedKey secret={created.secret} name={created.name} onDone={() => setCreated(null)} />}
      {owner ? (
        <form class="card inline-form" onSubmit={create} aria-labelledby="create-key-title">
          <h2 id="create-key-title">Create a key</h2>
          <label>
            Name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <fieldset>
            <legend>Permissions</legend>
            {PERMISSIONS.map((p) => (
              <label key={p} class="check">
                <input
                  type="checkbox"
                  checked={permissions.includes(p)}
                  onChange={(e) =>
                    setPermissions(e.currentTarget.checked ? [...permissions, p] : permissions.filter((x) => x !== p))
                  }
                />
                {p}
              </label>
            ))}
          </fieldset>
          <label>
            Plan
            <select value={plan} onChange={(e) => setPlan(e.currentTarget.value)}>
              {PLANS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary" disabled={permissions.length === 0}>
            Create key
          </button>
        </form>
      ) : (
        <p class="muted">Only an owner of the workspace can create or revoke keys.</p>
      )}
      {keys === null ? (
        error ? null : (
          <Loading />
        )
      ) : keys.length === 0 ? (
        <Empty>No API keys in this workspace yet.</Empty>
      ) : (
        <DataTable
          caption="API keys of this workspace"
          columns={['Name', 'Prefix', 'Permissions', 'Plan', 'Created', 'Last used', 'Revoked', owner && 'Action']}
        >
          {keys.map((k) => (
            <tr key={k.id} class={k.revoked_at ? 'revoked' : undefined}>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{k.permissions.join(', ')}</td>
              <td>{k.plan}</td>
              <td>{dateTime(k.created_at)}</td>
              <td>{k.last_used_at ? dateTime(k.last_used_at) : 'never'}</td>
              <td>{k.revoked_at ? dateTime(k.revoked_at) : '—'}</td>
              {owner && (
                <td class="row-actions">
                  {!k.revoked_at && (
                    <button type="button" class="danger" onClick={() => setRevoking(k)}>
                      Revoke<span class="sr-only"> {k.name}</span>
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
      {revoking && (
        <ConfirmDialog
          title="Revoke this key?"
          confirmLabel="Revoke key"
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke(revoking)}
        >
          <p>
            Programs using “{revoking.name}” (<code>{revoking.prefix}…</code>) will get 401 from now on. This cannot be
            undone.
          </p>
        </ConfirmDialog>
      )}
      <ScopedTokensHelp />
    </section>
  );
}
