import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { Notice } from './feedback.tsx';
import { NewPasswordField } from './new-password-field.tsx';

/**
 * The current password, the new one twice, and the request that changes it (the service signs out
 * the account's other sessions). `children` come first in the form (a heading, a hint); after a
 * change it calls `onChanged`, or shows `doneText` and empties the fields.
 */
export function PasswordChangeForm(props: {
  class: string;
  label: { readonly by: string } | { readonly text: string };
  currentLabel: string;
  submitLabel: string;
  busyLabel?: string;
  doneText?: string;
  onChanged?: () => void;
  children?: ComponentChildren;
}) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(false);
    if (next !== repeat) {
      setError('The two new passwords differ.');
      return;
    }
    setError(null);
    setBusy(true);
    try {
      await api('POST', '/dashboard/api/session/password', { current_password: current, new_password: next });
      if (props.onChanged) {
        props.onChanged();
        return;
      }
      setDone(true);
      setCurrent('');
      setNext('');
      setRepeat('');
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class={props.class}
      onSubmit={submit}
      {...('by' in props.label ? { 'aria-labelledby': props.label.by } : { 'aria-label': props.label.text })}
    >
      {props.children}
      {error && <Notice kind="error">{error}</Notice>}
      {done && props.doneText && <Notice kind="ok">{props.doneText}</Notice>}
      <label>
        {props.currentLabel}
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
      <button type="submit" class="primary" disabled={busy && props.busyLabel !== undefined}>
        {busy && props.busyLabel ? props.busyLabel : props.submitLabel}
      </button>
    </form>
  );
}
