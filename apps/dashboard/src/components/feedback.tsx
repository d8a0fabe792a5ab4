import type { ComponentChildren } from 'preact';
import { FALLBACK_POLL_MS } from '../live-events.ts';
import type { Status } from '../types.ts';

/** An error (the API's problem detail) or a confirmation, announced to screen readers. */
export function Notice(props: { kind: 'error' | 'ok'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

export function StatusBadge(props: { status: Status }) {
  return <span class={`badge badge-${props.status}`}>{props.status}</span>;
}

export function Loading() {
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}

/** Said while the live event stream is unavailable and the page refreshes slowly instead. */
export function LiveDown() {
  return (
    <p class="muted small" role="status">
      Live updates are unavailable right now; this page refreshes every {FALLBACK_POLL_MS / 1000} s until they are back.
    </p>
  );
}
