/**
 * `GET /errors/:kind`: the page a problem's `type` URI points at, one short HTML page per kind.
 * No authentication.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PROBLEM_KINDS, type ProblemKind } from '../../../core/errors/error-catalogue.ts';
import { KbError } from '../../../core/errors/kb-error.ts';
import { problemResponses } from '../schemas/common.schema.ts';

interface KindPage {
  readonly status: number;
  readonly title: string;
  readonly meaning: string;
  readonly remedy: string;
}

export const ERROR_KIND_PAGES: Record<ProblemKind, KindPage> = {
  'bad-request': {
    status: 400,
    title: 'Bad Request',
    meaning:
      'A query or path parameter is missing, out of range or malformed, the body could not be parsed (malformed JSON, wrong Content-Type), or an upload is unusable: no `file` part, an empty file, or a file type that is not allowed.',
    remedy: 'Read `detail`; it names the parameter or the problem (for a file type, the allowed types).',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    meaning:
      'No API key was sent, or the key is malformed, unknown or revoked. When X-API-Key is present it is the only key considered, even if an Authorization: Bearer key is sent too.',
    remedy: 'Send a valid key in X-API-Key (preferred) or Authorization: Bearer <key>.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    meaning:
      'The key is valid but lacks the permission the endpoint needs (`read`, `search` or `write`). From the dashboard: a state change without the session’s X-CSRF-Token, or (`error.code` `password_change_required`) an account still signed in with the password the service generated.',
    remedy:
      'Use a key with that permission; keys are created with `kb keys create --permissions ...`. In the dashboard, reload the page, or choose a new password when it asks for one.',
  },
  'not-found': {
    status: 404,
    title: 'Not Found',
    meaning:
      'The route, document or version does not exist, or belongs to another workspace. Document ids are UUIDs; anything else is not found.',
    remedy: 'Check the id and the key’s workspace.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method Not Allowed',
    meaning: 'The path exists but does not take this HTTP method; the `Allow` header lists the methods it takes.',
    remedy: 'Use one of the methods in `Allow`.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    meaning: 'The request conflicts with the current state, e.g. a rollback to the version that is already current.',
    remedy: 'Read the current state and retry with a request that applies to it.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload Too Large',
    meaning:
      'The uploaded file (or request body) is larger than the limit; `detail` states the actual size and the limit in bytes.',
    remedy: 'Upload files up to 52428800 bytes (50 MB).',
  },
  'validation-error': {
    status: 422,
    title: 'Validation Error',
    meaning:
      'The body was well formed but failed validation, e.g. metadata that is not a JSON object, over 64 keys, a key over 128 characters or over 16 KiB serialised. `errors` lists each failed field as {field, message}.',
    remedy: 'Fix every field listed in `errors`.',
  },
  'rate-limit-exceeded': {
    status: 429,
    title: 'Rate Limit Exceeded',
    meaning:
      'The key made more requests in the last 60 seconds than its plan allows (starter 100, pro 500, business 2000, enterprise 10000 a minute).',
    remedy: 'Wait at least `Retry-After` seconds, preferably with jittered exponential backoff.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal Server Error',
    meaning: 'The service failed unexpectedly. No internals are shown.',
    remedy: 'Retry later; when reporting it, quote the `trace_id` (also in the X-Request-Id header).',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service Unavailable',
    meaning: 'A backing engine (database, vector store, message log, object storage) is unavailable or busy.',
    remedy: 'Retry later with backoff; /health/ready shows which dependency is affected.',
  },
  'insufficient-storage': {
    status: 507,
    title: 'Insufficient Storage',
    meaning:
      'The disk, database or bucket the service writes to is full (or read-only), or an upload would leave less free space than the operator keeps in reserve (KB_MIN_FREE_BYTES). Nothing of the request was stored; reads and search keep working.',
    remedy:
      'Free space (delete or purge documents; both work on a full disk) or ask the operator to add some, then retry; /health/ready reports the `disk` check.',
  },
};

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function renderKindPage(kind: ProblemKind): string {
  const page = ERROR_KIND_PAGES[kind];
  const code = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${page.status} ${escapeHtml(page.title)} — kb-document-service</title></head>
<body>
<h1>${escapeHtml(kind)}</h1>
<p><strong>HTTP ${page.status} ${escapeHtml(page.title)}</strong></p>
<p>${code(page.meaning)}</p>
<p>What to do: ${code(page.remedy)}</p>
<p>Every error is RFC 7807 problem details (<code>application/problem+json</code>) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>instance</code>, <code>trace_id</code> and <code>timestamp</code>.</p>
</body>
</html>
`;
}

const errorPagesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/errors/:kind',
    {
      schema: {
        tags: ['errors'],
        operationId: 'getErrorPage',
        summary: 'Explanation of a problem kind',
        security: [],
        params: Type.Object({ kind: Type.String() }),
        produces: ['text/html'],
        response: {
          200: { description: 'An HTML page.', content: { 'text/html': { schema: Type.String() } } },
          ...problemResponses(404),
        },
      },
    },
    async (request, reply) => {
      const kind = request.params.kind;
      if (!(PROBLEM_KINDS as readonly string[]).includes(kind)) {
        throw new KbError('not-found', `No problem kind "${kind}". Kinds: ${PROBLEM_KINDS.join(', ')}.`);
      }
      return reply.type('text/html; charset=utf-8').send(renderKindPage(kind as ProblemKind));
    },
  );
};

export default errorPagesRoutes;
