import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { Notice } from '../components/feedback.tsx';
import { NewPasswordField } from '../components/new-password-field.tsx';
import type { Account } from '../types.ts';

/**
 * The first step after signing in with a password the service generated (the one printed at the
 * first start, by `kb users create`, or by a reset): nothing else answers until the person
 * chooses a password of their own.
 */
export function PasswordChangePage(props: { account: Account; onChanged: () => void; onSignOut: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (next !== repeat) {
      setError('The two new passwords differ.');
      return;
    }
    setError(null);
    setBusy(true);
    try {
      await api('POST', '/dashboard/api/session/password', { current_password: current, new_password: next });
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <h1>Choose a new password</h1>
      <p class="muted">
        You signed in as <strong>{props.account.email}</strong> with a password the service generated and printed.
        Choose a password of your own before you go on: at least 12 characters. Other sessions of this account are
        signed out.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      <form onSubmit={submit} class="stack" aria-label="Choose a new password">
        <label>
          Current password (the generated one)
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
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Set the new password'}
        </button>
      </form>
      <p>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </p>
    </main>
  );
}
