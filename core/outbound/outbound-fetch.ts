/**
 * One HTTP request the service makes of its own accord, through the outbound policy: every hop of
 * a redirect chain is checked again, the response body is bounded in bytes and the whole exchange
 * in time. Used by sync sources (fetching pages) and webhook deliveries.
 */

import http from 'node:http';
import https from 'node:https';
import { KbError } from '../errors/kb-error.ts';
import { checkOutboundUrl, createGuardedAgent, OUTBOUND_REFUSED, type OutboundPolicy } from './outbound-policy.ts';

export interface OutboundRequest {
  readonly url: string;
  /** Default `GET`. */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Bound of the whole exchange, redirects and body included. */
  readonly timeoutMs: number;
  /** Bound of the response body; a longer body cuts the connection. */
  readonly maxBytes: number;
  /**
   * `follow` (default): up to `maxRedirects` hops, each checked again; `same-host`: only to the
   * same scheme, host and port (a redirect elsewhere is refused); `none`: the 3xx is the answer.
   */
  readonly redirects?: 'follow' | 'same-host' | 'none';
  /** Default 5. */
  readonly maxRedirects?: number;
}

export interface OutboundResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The URL that answered, after redirects. */
  readonly url: string;
  readonly durationMs: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Agents per policy and scheme, so connections are reused between requests: shared by every
 * policy on the system resolver, kept with its resolver otherwise.
 */
const agents = new Map<string, http.Agent>();
const agentsByResolver = new WeakMap<object, Map<string, http.Agent>>();
function agentFor(protocol: 'http:' | 'https:', policy: OutboundPolicy): http.Agent {
  const key = `${protocol}${policy.allowPrivate}`;
  let cache = agents;
  if (policy.resolve) {
    cache = agentsByResolver.get(policy.resolve) ?? new Map();
    agentsByResolver.set(policy.resolve, cache);
  }
  let agent = cache.get(key);
  if (!agent) {
    agent = createGuardedAgent(protocol, policy);
    cache.set(key, agent);
  }
  return agent;
}

interface Hop {
  readonly url: URL;
  readonly method: string;
  readonly body: string | Uint8Array | undefined;
}

function headersOf(message: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function translate(error: unknown, url: URL): KbError {
  if (error instanceof KbError) return error;
  const e = error as NodeJS.ErrnoException;
  if (e?.code === OUTBOUND_REFUSED) return new KbError('outbound-refused', e.message);
  return new KbError('outbound-failed', `${url.origin} could not be reached: ${e?.message ?? String(error)}`, {
    cause: error,
  });
}

/** Sends one hop; resolves with the response head and its bounded body. */
function send(
  hop: Hop,
  request: OutboundRequest,
  policy: OutboundPolicy,
  signal: AbortSignal,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const protocol = hop.url.protocol as 'http:' | 'https:';
  const module = protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = module.request(
      hop.url,
      {
        method: hop.method,
        headers: { 'user-agent': 'kb-document-service', ...request.headers },
        agent: agentFor(protocol, policy),
        signal,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const headers = headersOf(res);
        if (REDIRECTS.has(status) && request.redirects !== 'none') {
          res.resume();
          resolve({ status, headers, body: Buffer.alloc(0) });
          return;
        }
        const declared = Number(headers['content-length']);
        if (Number.isFinite(declared) && declared > request.maxBytes) {
          res.destroy();
          reject(tooLarge(hop.url, request.maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxBytes) {
            res.destroy();
            req.destroy();
            reject(tooLarge(hop.url, request.maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, headers, body: Buffer.concat(chunks, size) }));
        res.on('error', (error) => reject(translate(error, hop.url)));
      },
    );
    req.on('error', (error) => reject(signal.aborted ? signal.reason : translate(error, hop.url)));
    if (hop.body !== undefined) req.end(hop.body);
    else req.end();
  });
}

function tooLarge(url: URL, maxBytes: number): KbError {
  return new KbError('outbound-too-large', `${url.href} answered more than ${maxBytes} bytes`);
}

/**
 * Performs the request through the policy. Throws `KbError` with code `outbound-refused` (target
 * or a redirect hop not allowed), `outbound-too-large`, `timeout` or `outbound-failed` (DNS,
 * connection or TLS error; retriable). An HTTP error status is a response, not an exception.
 */
export async function outboundFetch(request: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const started = performance.now();
  const first = checkOutboundUrl(request.url);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new KbError('timeout', `${first.origin} did not answer within ${request.timeoutMs} ms`)),
    request.timeoutMs,
  );
  const maxRedirects = request.maxRedirects ?? 5;
  let hop: Hop = { url: first, method: request.method ?? 'GET', body: request.body };
  try {
    for (let redirects = 0; ; redirects++) {
      const answer = await send(hop, request, policy, controller.signal);
      const location = answer.headers.location;
      if (!REDIRECTS.has(answer.status) || request.redirects === 'none' || location === undefined) {
        return { ...answer, url: hop.url.href, durationMs: performance.now() - started };
      }
      if (redirects >= maxRedirects) {
        throw new KbError('outbound-failed', `${first.href} redirected more than ${maxRedirects} times`, {
          retriable: false,
        });
      }
      const next = checkOutboundUrl(new URL(location, hop.url));
      if (request.redirects === 'same-host' && next.origin !== hop.url.origin) {
        throw new KbError('outbound-refused', `${hop.url.origin} redirected to another host (${next.origin})`);
      }
      const keepsMethod = answer.status === 307 || answer.status === 308;
      hop = keepsMethod
        ? { url: next, method: hop.method, body: hop.body }
        : { url: next, method: hop.method === 'HEAD' ? 'HEAD' : 'GET', body: undefined };
    }
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof KbError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
