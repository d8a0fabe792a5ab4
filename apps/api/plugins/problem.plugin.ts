/**
 * RFC 7807 problem details for every error the API answers with: thrown {@link KbError}s, schema
 * validation failures, Fastify's own errors (body too large, bad content type, malformed JSON),
 * multipart parser errors, unknown routes and unexpected exceptions.
 *
 * Decisions:
 * - Query-string and path-parameter validation → 400 `bad-request`; body validation → 422
 *   `validation-error` with `errors: [{field, message}]`.
 * - A body that cannot be parsed at all (malformed JSON, empty JSON body, a content type the route
 *   does not take, a non-multipart upload) → 400 `bad-request`: there are no fields to report, the
 *   request itself is malformed. 422 is kept for well-formed bodies that fail validation.
 * - 401, 403 and 429 also carry `error: {code, message}` (`retry_after` on 429); `code` is the kind
 *   (`unauthorized`, `forbidden`, `rate_limit_exceeded`), or `password_change_required` for a
 *   dashboard session that must first replace a generated password.
 * - 5xx never show the underlying message; the error is logged with the trace id.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ErrorCode, ProblemKind } from '../../../core/errors/error-catalogue.ts';
import { type FieldError, KbError } from '../../../core/errors/kb-error.ts';
import { isStorageFull } from '../../../core/errors/storage-errors.ts';
import { DISPLAY_SAFE_MESSAGE, DISPLAY_SAFE_PATTERN } from '../../../core/util/display-text.ts';
import { noteProblem } from '../lib/access-log.ts';
import { problemOf } from '../lib/problem-status.ts';

export interface ProblemSpec {
  /** The catalogue code of a thrown {@link KbError}. */
  readonly code?: ErrorCode;
  readonly status: number;
  readonly kind: ProblemKind;
  readonly title: string;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
  readonly retryAfter?: number;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  trace_id: string;
  timestamp: string;
  errors?: FieldError[];
  error?: { code: string; message: string; retry_after?: number };
}

const GENERIC_5XX: Record<number, string> = {
  500: 'An unexpected error occurred. Quote the trace_id when reporting it.',
  503: 'A backing service is unavailable or busy. Retry later, with backoff.',
  507: 'The service has run out of storage space, and nothing of this request was stored. Retry once space is freed (deleting or purging documents frees it).',
};

const ALTERNATIVE_ERROR_CODES: Partial<Record<ProblemKind, string>> = {
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  'rate-limit-exceeded': 'rate_limit_exceeded',
};

/** Catalogue codes a client must tell apart from the rest of their kind, as `error.code`. */
const SPECIFIC_ERROR_CODES: Partial<Record<ErrorCode, string>> = {
  'password-change-required': 'password_change_required',
  'too-many-streams': 'too_many_streams',
  'backlog-full': 'backlog_full',
};

/** Codes of 5xx answers whose message is the service's own and safe to show (not an engine's). */
const TOLD_5XX: ReadonlySet<ErrorCode> = new Set(['deployment-backlog-full']);

const STATUS_KINDS: Record<number, ProblemKind> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  413: 'payload-too-large',
  422: 'validation-error',
  429: 'rate-limit-exceeded',
  503: 'service-unavailable',
  507: 'insufficient-storage',
};

function fromCode(code: ErrorCode, detail: string, extra: Partial<ProblemSpec> = {}) {
  return { ...problemOf(code), detail, ...extra } satisfies ProblemSpec;
}

/** Ajv error → `{field, message}`; `field` is a dotted path into the body (or the parameter name). */
function fieldErrors(validation: NonNullable<FastifyError['validation']>): FieldError[] {
  const raw = validation.map((e) => {
    const params = (e.params ?? {}) as Record<string, unknown>;
    const segments = (e.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      segments.push(params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      segments.push(params.additionalProperty);
      message = 'is not an allowed field';
    } else if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      message = `must be one of: ${params.allowedValues.join(', ')}`;
    } else if (e.keyword === 'format' && params.format === 'date-time') {
      message = 'must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T12:00:00Z';
    } else if (e.keyword === 'pattern' && params.pattern === '\\S') {
      message = 'must not be blank';
    } else if (e.keyword === 'pattern' && params.pattern === DISPLAY_SAFE_PATTERN) {
      message = DISPLAY_SAFE_MESSAGE;
    } else if (e.keyword === 'not' && segments.at(-1) === 'weights') {
      message = 'keyword and semantic are both 0';
    } else if (e.keyword === 'anyOf') {
      message = 'does not match any allowed shape';
    }
    return { field: segments.join('.') || 'body', message, keyword: e.keyword };
  });
  // A nullable date-time or label (`anyOf` string | null) that fails says what the string needs.
  for (const r of raw) {
    if (r.keyword !== 'anyOf') continue;
    const specific = raw.find(
      (o) =>
        o.field === r.field &&
        ((o.keyword === 'format' && o.message.includes('date-time')) || o.message === DISPLAY_SAFE_MESSAGE),
    );
    if (specific) r.message = specific.message;
  }
  // An `anyOf` failure also reports each branch's failure at the same path: keep the summary only.
  const anyOfFields = new Set(raw.filter((r) => r.keyword === 'anyOf').map((r) => r.field));
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const r of raw) {
    if (anyOfFields.has(r.field) && r.keyword !== 'anyOf') continue;
    const key = `${r.field}\u0000${r.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field: r.field, message: r.message });
  }
  return out;
}

/** Errors the multipart parser (busboy/dicer) raises on a malformed body, without a status code. */
const MULTIPART_PARSE_ERROR =
  /multipart data|Multipart: Boundary not found|Malformed part header|Unexpected end of form/;

/** Maps anything thrown while handling a request to a problem. */
export function describeError(error: unknown): ProblemSpec {
  // Whatever wrapped it (an aborted stream, a store's own error), running out of space is a 507.
  if (isStorageFull(error)) return fromCode('insufficient-storage', GENERIC_5XX[507] ?? '');
  if (error instanceof KbError) {
    const entry = problemOf(error.code);
    const detail =
      entry.status >= 500 && !TOLD_5XX.has(error.code)
        ? (GENERIC_5XX[entry.status] ?? GENERIC_5XX[500]!)
        : error.message;
    return {
      code: error.code,
      ...entry,
      detail,
      ...(error.errors ? { errors: error.errors } : {}),
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
    };
  }
  const fe = error as Partial<FastifyError> & { part?: unknown };
  if (fe && Array.isArray(fe.validation)) {
    const errors = fieldErrors(fe.validation);
    if (fe.validationContext === 'body') {
      const list = errors.map((e) => `${e.field} ${e.message}`).join('; ');
      return fromCode('validation-error', `The request body failed validation: ${list}.`, { errors });
    }
    const where = fe.validationContext === 'params' ? 'path parameter' : 'query parameter';
    const list = errors.map((e) => `${e.field} ${e.message}`).join('; ');
    return fromCode('bad-request', `Invalid ${where}: ${list}.`, { errors });
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fromCode('payload-too-large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return fromCode(
        'bad-request',
        'Unsupported Content-Type: send application/json (multipart/form-data for uploads).',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return fromCode('bad-request', 'The body is empty but Content-Type is application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return fromCode(
        'bad-request',
        'The body is not valid JSON, or it holds a `__proto__` or `constructor.prototype` key (refused at any depth).',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return fromCode('bad-request', 'The body size does not match Content-Length.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return fromCode('bad-request', 'The request must be multipart/form-data with a `file` part.');
    case 'FST_FILES_LIMIT':
      return fromCode('bad-request', 'Only one file part (`file`) is accepted per request.');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return fromCode('bad-request', 'The form has too many parts; send `file` and at most the documented fields.');
    case 'FST_PROTO_VIOLATION':
      return fromCode('bad-request', 'A form field name is not allowed.');
    case 'FST_MP_PREMATURE_CLOSE':
      return fromCode('bad-request', 'The request ended before the multipart body was complete.');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return fromCode('validation-error', 'metadata must be a JSON object (the field is not valid JSON).', {
        errors: [{ field: 'metadata', message: 'is not valid JSON' }],
      });
    default:
      break;
  }
  if (fe?.statusCode === undefined && typeof fe?.message === 'string' && MULTIPART_PARSE_ERROR.test(fe.message)) {
    // The multipart parser's own errors carry no status: a truncated or malformed form.
    return fromCode('bad-request', `The multipart body is malformed: ${fe.message}.`);
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) {
    return fromCode('bad-request', `The body is not valid JSON: ${error.message}`);
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Fastify and busboy client errors (e.g. "Unexpected end of form", "Malformed part header").
    const kind = STATUS_KINDS[status] ?? 'bad-request';
    const entry = problemOf(kind);
    const message = typeof fe.message === 'string' && fe.message ? fe.message : entry.title;
    return { ...entry, detail: message };
  }
  return fromCode('internal-error', GENERIC_5XX[500]!);
}

/** Base of problem `type` URIs: the configured one or the request's own origin. */
export function problemBase(request: FastifyRequest, configured: string | null): string {
  if (configured) return configured;
  return `${request.protocol}://${request.host}`;
}

export function requestPath(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function problemBody(request: FastifyRequest, base: string | null, spec: ProblemSpec): ProblemBody {
  const body: ProblemBody = {
    type: `${problemBase(request, base)}/errors/${spec.kind}`,
    title: spec.title,
    status: spec.status,
    detail: spec.detail,
    instance: requestPath(request),
    trace_id: request.id,
    timestamp: new Date().toISOString(),
  };
  if (spec.errors && spec.errors.length > 0) body.errors = spec.errors.map((e) => ({ ...e }));
  const general = ALTERNATIVE_ERROR_CODES[spec.kind];
  const code = general && ((spec.code && SPECIFIC_ERROR_CODES[spec.code]) || general);
  if (code) {
    body.error = { code, message: spec.detail };
    if (spec.kind === 'rate-limit-exceeded') body.error.retry_after = Math.max(1, Math.ceil(spec.retryAfter ?? 1));
  }
  return body;
}

/** Sends a problem as `application/problem+json` (headers already set on the reply are kept). */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, base: string | null, spec: ProblemSpec) {
  const body = problemBody(request, base, spec);
  if (spec.kind === 'rate-limit-exceeded') reply.header('retry-after', String(body.error?.retry_after ?? 1));
  else if (spec.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(spec.retryAfter))));
  if (spec.kind === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="kb-document-service"');
  return reply.code(spec.status).type('application/problem+json; charset=utf-8').send(JSON.stringify(body));
}

export interface ProblemPluginOptions {
  readonly problemBaseUrl: string | null;
}

async function problemPlugin(app: FastifyInstance, opts: ProblemPluginOptions) {
  app.setErrorHandler((error, request, reply) => {
    const spec = describeError(error);
    if (spec.status >= 500) {
      request.log.error({ err: error, trace_id: request.id }, 'request failed');
    } else {
      // The access log writes it (sampled: a flood of refusals must not fill the disk).
      noteProblem(request, spec);
    }
    return sendProblem(request, reply, opts.problemBaseUrl, spec);
  });

  // Every route's path as a pattern, to tell "no such path" (404) from "not with this method" (405).
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const source = route.url
      .split('/')
      .map((part) =>
        part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    routes.push({ pattern: new RegExp(`^${source}/?$`), methods });
  });

  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = requestPath(request);
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(pathname)).flatMap((r) => r.methods))].sort();
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('allow', allowed.join(', '));
      return sendProblem(request, reply, opts.problemBaseUrl, {
        ...problemOf('method-not-allowed'),
        detail: `${pathname} does not take ${request.method}; it takes ${allowed.join(', ')}.`,
      });
    }
    return sendProblem(request, reply, opts.problemBaseUrl, {
      ...problemOf('not-found'),
      detail: `No route ${request.method} ${pathname}.`,
    });
  };
  // Answered before the body is read: a method no route takes (e.g. QUERY) is a 405 or 404 whatever
  // its body, not a complaint about the body's content type.
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return answerUnrouted(request, reply);
  });
  app.setNotFoundHandler((request, reply) => answerUnrouted(request, reply));
}

/** Error and not-found handlers for the whole application (not encapsulated). */
export default fp(problemPlugin, { name: 'kb-problem-details', fastify: '5.x' });
