/**
 * Finishes the OpenAPI document @fastify/swagger generates from the route schemas, so that tools
 * can use it: every schema the route schemas name (a `title` in PascalCase, such as `Document` or
 * `SearchRequest`) moved to `components.schemas` and referenced with `$ref` wherever it is used, so
 * generated clients get those names; one response per error status in `components`, referenced
 * from every operation; the response headers (`X-Request-Id`, `X-RateLimit-*`, `Retry-After`,
 * `Idempotent-Replayed`); the `Idempotency-Key` request header as one parameter in `components`,
 * referenced from every write that takes it; every status each operation can answer; an example
 * for every request and response body.
 */
import { isDeepStrictEqual } from 'node:util';
import { Problem } from '../schemas/common.schema.ts';
import { OPERATION_EXAMPLES, PROBLEM_EXAMPLES } from './openapi-examples.ts';

type Json = Record<string, unknown>;

/** Suffix of the operation ids of the `/v1/...` aliases (`getDocument` → `getDocumentV1`). */
export const ALIAS_OPERATION_SUFFIX = 'V1';

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const IDEMPOTENCY_KEY_DESCRIPTION =
  'Makes the write safe to send again: the same key with the same request (method, path, query and body; for an upload the file and form fields) within `KB_IDEMPOTENCY_TTL_HOURS` (24 h) answers the first answer again (same status and body, with `Idempotent-Replayed: true`) without writing again. The same key with another request is 422; while the first request with the key is still running, a retry waits for it briefly, then is 409 with `Retry-After`. Keys belong to the API key that sends them. Answers of 5xx and of refused requests (400, 413, 422, 429) are not kept: send again with the same key. A UUID per logical write is a good key.';

/** The `Idempotency-Key` header as a route schema's `headers` (documented, not validated by the schema). */
export const IDEMPOTENCY_KEY_HEADERS = {
  type: 'object',
  properties: {
    'Idempotency-Key': {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7E]+$',
      description: IDEMPOTENCY_KEY_DESCRIPTION,
    },
  },
};

/** The parameter every write that takes an `Idempotency-Key` references. */
const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: IDEMPOTENCY_KEY_DESCRIPTION,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
};

/** Statuses every write that takes an `Idempotency-Key` may answer because of it. */
const IDEMPOTENCY_STATUSES = [400, 409, 422];

const ERROR_RESPONSES: Record<number, { name: string; description: string; headers: string[] }> = {
  400: {
    name: 'BadRequest',
    description:
      'Bad request: invalid or missing query or path parameters, a malformed body, an unusable upload, or a malformed `Idempotency-Key`.',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  401: {
    name: 'Unauthorized',
    description: 'Missing, invalid or revoked API key.',
    headers: ['X-Request-Id', 'WWW-Authenticate'],
  },
  403: {
    name: 'Forbidden',
    description: 'The API key lacks the permission this endpoint needs.',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  404: {
    name: 'NotFound',
    description: 'No such document, version, chunk or page (also another workspace’s document).',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  409: {
    name: 'Conflict',
    description:
      'The resource is not in a state that allows this: a version still processing, failed or archived (compare, context), a rollback to the current version, the index on another embedding model (semantic search); or the first request with this `Idempotency-Key` is still running (title `Idempotency-Key in use`, with `Retry-After`: send it again then to get its answer).',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The file or body is larger than the service accepts; `detail` gives the byte counts.',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  422: {
    name: 'ValidationError',
    description:
      'The body failed validation (`errors` lists each failed field), or the `Idempotency-Key` was already used for another request (title `Idempotency-Key used for another request`).',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
  429: {
    name: 'RateLimited',
    description:
      'The key’s rate limit is exhausted, or (writes that queue ingestion: upload, new content, reprocess, a rollback that must be ingested) the workspace’s ingestion backlog is full (`error.code` `backlog_full`); retry after `Retry-After` seconds.',
    headers: ['X-Request-Id', 'Retry-After', ...RATE_LIMIT_HEADERS],
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'A backing engine is unavailable or busy; retry later, with backoff. Writes that queue ingestion also answer 503 while the ingestion backlog of the whole service is full (title `Ingestion backlog of the service full`, with `Retry-After`).',
    headers: ['X-Request-Id'],
  },
  507: {
    name: 'InsufficientStorage',
    description:
      'The service is out of storage space, or the write would leave less free than it keeps; nothing was stored. Deleting or purging documents works on a full disk and frees space.',
    headers: ['X-Request-Id', ...RATE_LIMIT_HEADERS],
  },
};

const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'Id of this request (UUID v7); error bodies repeat it as `trace_id`.',
    required: true,
    schema: { type: 'string', format: 'uuid' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests a minute the key’s plan allows (every response to an authenticated request).',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current 60-second window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) when the oldest counted request leaves the window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme (`Bearer`; `X-API-Key` is preferred).',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored answer of an earlier request with the same `Idempotency-Key` (nothing was written again); absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Statuses an operation answers beyond those its route schema lists (found in its code paths). */
const EXTRA_STATUSES: Readonly<Record<string, readonly number[]>> = {
  compareVersions: [409],
  getDocumentContext: [409],
  updateDocumentMetadata: [413],
  rollbackDocument: [413],
  search: [413],
};

/** Allowed declared types of an uploaded file (the type is detected from the content; these are hints). */
export const UPLOAD_CONTENT_TYPES = [
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/json',
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/octet-stream',
];

const ref = (kind: 'headers' | 'parameters' | 'responses' | 'schemas', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function components(): Json {
  const responses: Json = {};
  for (const [status, spec] of Object.entries(ERROR_RESPONSES)) {
    responses[spec.name] = {
      description: spec.description,
      headers: Object.fromEntries(spec.headers.map((h) => [h, ref('headers', h)])),
      content: { 'application/problem+json': { schema: ref('schemas', 'Problem'), example: PROBLEM_EXAMPLES[status] } },
    };
  }
  return {
    schemas: {},
    headers: plain(HEADERS),
    responses,
    parameters: { IdempotencyKey: plain(IDEMPOTENCY_KEY_PARAMETER) },
  };
}

function finishOperation(operation: Json, globalSecurity: unknown): void {
  const operationId = String(operation.operationId ?? '');
  const baseId = operationId.endsWith(ALIAS_OPERATION_SUFFIX)
    ? operationId.slice(0, -ALIAS_OPERATION_SUFFIX.length)
    : operationId;
  const examples = OPERATION_EXAMPLES[baseId];
  const security = (operation.security ?? globalSecurity) as unknown[];
  const authenticated = Array.isArray(security) && security.length > 0;
  const parameters = (operation.parameters ?? []) as Json[];
  const idempotent = parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
  if (idempotent) {
    operation.parameters = parameters.map((p) =>
      p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key' ? ref('parameters', 'IdempotencyKey') : p,
    );
  }

  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const extra = [
    ...(EXTRA_STATUSES[baseId] ?? []),
    ...(authenticated ? [503] : []),
    ...(idempotent ? IDEMPOTENCY_STATUSES : []),
  ];
  for (const status of extra) responses[String(status)] ??= {};
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status);
    const content = response.content as Record<string, Json> | undefined;
    const problem = ERROR_RESPONSES[code];
    if (problem && (content === undefined || content['application/problem+json'])) {
      responses[status] = ref('responses', problem.name);
      continue;
    }
    const headers = [
      'X-Request-Id',
      ...(authenticated ? RATE_LIMIT_HEADERS : []),
      ...(idempotent ? ['Idempotent-Replayed'] : []),
    ];
    response.headers = Object.fromEntries(headers.map((h) => [h, ref('headers', h)]));
    const example = examples?.responses[status];
    for (const media of Object.values(content ?? {})) {
      if (example !== undefined) media.example = example;
    }
  }
  operation.responses = responses;

  const body = operation.requestBody as { content?: Record<string, Json> } | undefined;
  for (const [type, media] of Object.entries(body?.content ?? {})) {
    if (examples?.request !== undefined) media.example = examples.request;
    if (type === 'multipart/form-data') {
      media.encoding = {
        file: { contentType: UPLOAD_CONTENT_TYPES.join(', ') },
        metadata: { contentType: 'application/json' },
      };
    }
  }
}

/** A schema's `title` that names a component: one PascalCase word. */
const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;

/** Keys whose values are examples (data, not schemas): nothing under them is a named schema. */
const EXAMPLE_KEYS = new Set(['example', 'examples']);

/**
 * Replaces every schema whose `title` names a component with a `$ref` to it, innermost first, and
 * collects the schemas (themselves with their named parts as `$ref`s) into `schemas`. Two different
 * schemas under one name are a mistake in the route schemas and throw.
 */
function hoistNamedSchemas(node: unknown, schemas: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((item) => hoistNamedSchemas(item, schemas));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    out[key] = EXAMPLE_KEYS.has(key) ? value : hoistNamedSchemas(value, schemas);
  }
  const name = out.title;
  if (typeof name !== 'string' || !COMPONENT_NAME.test(name)) return out;
  const known = schemas[name];
  if (known !== undefined && !isDeepStrictEqual(known, out)) {
    throw new Error(`Two different schemas are named ${name} in the route schemas; give one another title.`);
  }
  schemas[name] = out;
  return ref('schemas', name);
}

/** Returns the finished document (the input is not changed). */
export function finishOpenApiDocument(document: Json): Json {
  const doc = plain(document);
  doc.components = { ...(doc.components as Json), ...components() };
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(item)) finishOperation(operation, doc.security);
  }
  const schemas: Record<string, Json> = {};
  hoistNamedSchemas(plain(Problem), schemas);
  doc.paths = hoistNamedSchemas(doc.paths, schemas);
  (doc.components as Json).schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return doc;
}
