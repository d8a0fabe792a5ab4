import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { Notice } from '../components/feedback.tsx';
import type { SessionInfo } from '../types.ts';

export function SignInPage(props: { onSignedIn: (session: SessionInfo) => void; notice?: string | undefined }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onSignedIn(await api<SessionInfo>('POST', '/dashboard/api/session', { email, password }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <h1>Knowledge base</h1>
      <p class="muted">Sign in to manage documents, search and API keys.</p>
      {props.notice && <Notice kind="ok">{props.notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <form onSubmit={submit} class="stack">
        <label>
          Email
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="muted small">
        The first start prints an owner account's password; <code>kb users create</code> adds accounts.
      </p>
    </main>
  );
}
