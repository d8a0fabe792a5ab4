import { PasswordChangeForm } from '../components/password-change-form.tsx';
import type { Account } from '../types.ts';

/**
 * The first step after signing in with a password the service generated (the one printed at the
 * first start, by `kb users create`, or by a reset): nothing else answers until the person
 * chooses a password of their own.
 */
export function PasswordChangePage(props: { account: Account; onChanged: () => void; onSignOut: () => void }) {
  return (
    <main class="sign-in" id="main">
      <h1>Choose a new password</h1>
      <p class="muted">
        You signed in as <strong>{props.account.email}</strong> with a password the service generated and printed.
        Choose a password of your own before you go on: at least 12 characters. Other sessions of this account are
        signed out.
      </p>
      <PasswordChangeForm
        class="stack"
        label={{ text: 'Choose a new password' }}
        currentLabel="Current password (the generated one)"
        submitLabel="Set the new password"
        busyLabel="Saving…"
        onChanged={props.onChanged}
      />
      <p>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </p>
    </main>
  );
}
