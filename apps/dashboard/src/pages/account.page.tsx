import { PasswordChangeForm } from '../components/password-change-form.tsx';
import type { Account } from '../types.ts';

export function AccountPage(props: { account: Account }) {
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
      <PasswordChangeForm
        class="card stack narrow"
        label={{ by: 'password-title' }}
        currentLabel="Current password"
        submitLabel="Change password"
        doneText="The password is changed."
      >
        <h2 id="password-title">Change the password</h2>
        <p class="muted small">At least 12 characters. Every other session of this account is signed out.</p>
      </PasswordChangeForm>
    </section>
  );
}
