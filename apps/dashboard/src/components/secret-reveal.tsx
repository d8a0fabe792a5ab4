import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A secret shown once, with a Copy button and a "Done" that hides it for good. */
export function SecretReveal(props: {
  title: string;
  secret: string;
  testId: string;
  /** What is shown ("secret" by default, "key" for an API key). */
  noun?: string;
  /** What the user is told after "Store it now;" (by default: it cannot be read again). */
  afterwards?: string;
  children?: ComponentChildren;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const noun = props.noun ?? 'secret';
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied(`Copying is not allowed here; select the ${noun} and copy it by hand.`);
    }
  };
  return (
    <section class="card reveal" aria-labelledby={`${props.testId}-title`}>
      <h2 id={`${props.testId}-title`}>{props.title}</h2>
      <p>
        <strong>This is the only time the {noun} is shown.</strong> Store it now;{' '}
        {props.afterwards ?? 'it cannot be read again'}.
      </p>
      <div class="secret-row">
        <code class="secret" data-testid={props.testId}>
          {props.secret}
        </code>
        <button type="button" class="primary" onClick={copy}>
          Copy
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
      {props.children}
      <button type="button" onClick={props.onDone}>
        Done, I stored it
      </button>
    </section>
  );
}
