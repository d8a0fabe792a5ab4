/** A new password input with the service's rule (at least 12 characters) checked by the browser too. */
export function NewPasswordField(props: { label: string; value: string; onInput: (value: string) => void }) {
  return (
    <label>
      {props.label}
      <input
        type="password"
        autocomplete="new-password"
        required
        minLength={12}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}
