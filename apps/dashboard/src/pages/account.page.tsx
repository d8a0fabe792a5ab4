import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { Notice } from '../components/feedback.tsx';
import { NewPasswordField } from '../components/new-password-field.tsx';
import type { Account } from '../types.ts';

export function AccountPage(props: { account: Account }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(false);
    if (next !== repeat) {
      setError('The two new passwords differ.');
      return;
    }
    setError(null);
    try {
      await api('POST', '/dashboard/api/session/password', { current_password: current, new_password: next });
      setDone(true);
      setCurrent('');
      setNext('');
      setRepeat('');
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section>
      <h1>Settings › Account</h1>
      <dl class="meta">
        <dt>Email</dt>
        <dd>{props.account.email}</dd>
        <dt>Role</dt>
        <dd>{props.account.role}</dd>
        <dt>Workspaces</dt>
        <dd>{props.account.workspaces.join(', ')}</dd>
      </dl>
      <form class="card stack narrow" onSubmit={submit} aria-labelledby="password-title">
        <h2 id="password-title">Change the password</h2>
        <p class="muted small">At least 12 characters. Every other session of this account is signed out.</p>
        {error && <Notice kind="error">{error}</Notice>}
        {done && <Notice kind="ok">The password is changed.</Notice>}
        <label>
          Current password
          <input
            type="password"
            autocomplete="current-password"
            required
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </label>
        <NewPasswordField label="New password" value={next} onInput={setNext} />
        <NewPasswordField label="New password again" value={repeat} onInput={setRepeat} />
        <button type="submit" class="primary">
          Change password
        </button>
      </form>
    </section>
  );
}
