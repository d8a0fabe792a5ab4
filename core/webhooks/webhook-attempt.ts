import { Webhook } from 'standardwebhooks';
import { toKbError } from '../errors/kb-error.ts';
import { outboundFetch } from '../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../ports/webhook-store/webhook-store.port.ts';

/** What one attempt came to: a 2xx (`ok`), another status, or no answer (`error`). */
export interface AttemptOutcome {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Receivers' answers are read up to this size and otherwise ignored. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** The Standard Webhooks headers of one attempt: the event id, the time now, the signature. */
export function signedHeaders(
  secret: string,
  delivery: Pick<WebhookDelivery, 'eventId' | 'payload'>,
  now: Date,
): Record<string, string> {
  return {
    'webhook-id': delivery.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(delivery.eventId, now, delivery.payload),
  };
}

/**
 * Sends one signed attempt of `delivery` to `endpoint` through the outbound guard: POST, JSON
 * body, `timeoutMs` for the whole exchange, redirects followed only to the same host, the target
 * checked again after DNS. Never throws: a refusal, a timeout or an unreachable host is an outcome.
 */
export async function attemptDelivery(
  endpoint: Pick<WebhookEndpoint, 'url' | 'secret'>,
  delivery: Pick<WebhookDelivery, 'eventId' | 'payload'>,
  options: { readonly timeoutMs: number; readonly policy: OutboundPolicy; readonly userAgent: string },
): Promise<AttemptOutcome> {
  const started = Date.now();
  try {
    const response = await outboundFetch(
      {
        url: endpoint.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': options.userAgent,
          ...signedHeaders(endpoint.secret, delivery, new Date()),
        },
        body: delivery.payload,
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_RESPONSE_BYTES,
        redirects: 'same-host',
      },
      options.policy,
    );
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      statusCode: response.status,
      error: ok ? null : `The receiver answered ${response.status}.`,
      durationMs: Math.round(response.durationMs),
    };
  } catch (thrown) {
    const error = toKbError(thrown);
    return { ok: false, statusCode: null, error: `${error.code}: ${error.message}`, durationMs: Date.now() - started };
  }
}
