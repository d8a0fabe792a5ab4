/**
 * The dashboard's pages under `/dashboard/`: the built files, and `index.html` for every other
 * page path (the pages route in the browser). `GET /` from a browser (Accept: text/html) is
 * redirected here; API clients see `/` as before.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';
import { type DashboardAsset, loadDashboardAssets } from '../lib/dashboard-assets.ts';

export interface DashboardPagesOptions {
  /** The build folder (default `apps/dashboard/dist`). */
  readonly dir?: string;
}

/** Scripts, styles, images and requests from this origin only; no framing. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>
<body><h1>The dashboard is not built</h1>
<p>Run <code>npm run build:dashboard</code> (it also runs on <code>npm install</code>) and restart the service.</p>
</body></html>
`;

export function wantsHtml(accept: string | undefined): boolean {
  return typeof accept === 'string' && /(^|,)\s*text\/html\b/i.test(accept);
}

/**
 * An application-wide `onRequest` hook (`/` has no route, so the hook cannot live in this
 * plugin's scope), added before the problem plugin answers unrouted requests: a browser asking
 * for `/` goes to the dashboard.
 */
export async function redirectBrowsersToDashboard(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  if (request.url !== '/' || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
  if (wantsHtml(request.headers.accept)) return reply.redirect('/dashboard/', 302);
  return undefined;
}

function send(reply: FastifyReply, asset: DashboardAsset) {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('referrer-policy', 'same-origin');
  reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  return reply.type(asset.type).send(asset.body);
}

const dashboardPagesRoutes: FastifyPluginAsync<DashboardPagesOptions> = async (app, opts) => {
  const assets = await loadDashboardAssets(opts.dir);

  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/', 301));

  app.get<{ Params: { '*': string } }>('/dashboard/*', async (request, reply) => {
    const rest = request.params['*'];
    if (rest === 'api' || rest.startsWith('api/')) {
      throw new KbError('not-found', `No dashboard endpoint ${request.url.split('?')[0]}.`);
    }
    if (!assets) {
      return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    }
    const file = assets.get(rest);
    if (file) return send(reply, file);
    if (rest.startsWith('assets/')) throw new KbError('not-found', `No dashboard file ${rest}.`);
    return send(reply, assets.get('index.html') as DashboardAsset);
  });
};

export default dashboardPagesRoutes;
