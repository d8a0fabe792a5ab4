/**
 * A loopback HTTP receiver for webhook tests: records every request (headers lower-case, raw
 * body) and answers as the test tells it, per path: a status, or a delay first (to make the
 * sender time out), or no answer at all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: number;
}

/** How to answer the nth request (0-based) to a path: a status after an optional delay, or `hang`. */
export type Answer = { readonly status: number; readonly delayMs?: number } | 'hang';

export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:1234`. */
  readonly url: string;
  readonly received: ReceivedRequest[];
  /** Requests to `path`, parsed JSON bodies with their headers. */
  to(
    path: string,
  ): Array<ReceivedRequest & { json: { type: string; timestamp: string; data: Record<string, unknown> } }>;
  /** Answers for `path`, request by request; after the list, 200. */
  answer(path: string, answers: readonly Answer[]): void;
  /** Resolves once `predicate` holds for the received requests (polls every 25 ms). */
  waitFor(predicate: (received: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const answers = new Map<string, Answer[]>();
  const counts = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      const answer = answers.get(path)?.[n] ?? { status: 200 };
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    to(path) {
      return received.filter((r) => r.path === path).map((r) => ({ ...r, json: JSON.parse(r.body) }));
    },
    answer(path, list) {
      answers.set(path, [...list]);
    },
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
