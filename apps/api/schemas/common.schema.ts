/**
 * Shared request and response schemas (TypeBox, i.e. JSON Schema). Request schemas validate;
 * response schemas document the views of `core/model/response-views.model.ts` in the OpenAPI document
 * (responses are serialised as they are, see `app.ts`).
 */
import { type StringOptions, type TSchema, Type } from '@sinclair/typebox';
import { DISPLAY_SAFE_PATTERN } from '../../../core/util/display-text.ts';

/** A string restricted to a list of values, as one JSON-schema `enum` (one clear error message). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number]; title?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A name or description people read (in the dashboard, the CLI): no control characters, no
 * bidirectional overrides or isolates (see `core/util/display-text.ts`), 422 naming the field.
 */
export const Label = (options: StringOptions) => Type.String({ ...options, pattern: DISPLAY_SAFE_PATTERN });

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  title: 'Metadata',
  description: 'Free-form key-value pairs (JSON object).',
});

export const IngestError = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    stage: Type.String(),
    attempts: Type.Integer(),
    at: DateTime(),
  },
  { title: 'IngestError', description: 'Why ingestion failed.' },
);

export const Pagination = Type.Object(
  {
    has_more: Type.Boolean(),
    next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` to get the next page.' })),
    total: Type.Integer({ description: 'Items matching the filters, over all pages.' }),
  },
  { title: 'Pagination' },
);

export const DocumentIdParams = Type.Object({
  id: Type.String({ description: 'Document id (UUID). An id that is not a UUID is simply not found.' }),
});

export const FieldErrorSchema = Type.Object({ field: Type.String(), message: Type.String() }, { title: 'FieldError' });

/** RFC 7807 problem details, with the members this service adds. */
export const Problem = Type.Object(
  {
    type: Type.String({
      format: 'uri',
      description: '`<base>/errors/<kind>`; the page at that address explains the kind.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'Request path.' }),
    trace_id: Type.String({ format: 'uuid', description: 'Same value as the `X-Request-Id` response header.' }),
    timestamp: DateTime(),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'Each failed field (422).' })),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String({
            description:
              '`unauthorized`, `forbidden`, `rate_limit_exceeded`, `backlog_full` (429: the workspace’s ingestion backlog is full; retry after `Retry-After`), or `password_change_required` (a dashboard session whose generated password must be changed first).',
          }),
          message: Type.String(),
          retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait (429).' })),
        },
        { title: 'ProblemError', description: 'Alternative error member on 401, 403 and 429.' },
      ),
    ),
  },
  { title: 'Problem', description: 'RFC 7807 problem details (`application/problem+json`).' },
);

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: invalid or missing query parameters, or a malformed body.',
  401: 'Missing, invalid or revoked API key.',
  403: 'The API key lacks the permission this endpoint needs.',
  404: 'Not found (also another workspace’s document).',
  409: 'Conflict.',
  413: 'Payload too large.',
  422: 'The body failed validation; `errors` lists each failed field.',
  429: 'Rate limit exceeded, or the workspace’s ingestion backlog is full; see `Retry-After`.',
  503: 'Service unavailable.',
  507: 'Insufficient storage: the service is out of space (or would be left with less than it keeps free); nothing was stored. Deleting or purging documents works and frees space.',
};

/** OpenAPI response entries for the given error statuses, as problem+json. */
export function problemResponses(...statuses: number[]) {
  const out: Record<
    number,
    { description: string; content: { 'application/problem+json': { schema: typeof Problem } } }
  > = {};
  for (const status of statuses) {
    out[status] = {
      description: PROBLEM_DESCRIPTIONS[status] ?? 'Error.',
      content: { 'application/problem+json': { schema: Problem } },
    };
  }
  return out;
}

/** The statuses every authenticated endpoint may answer with. */
export const AUTHENTICATED_ERRORS = [401, 403, 429] as const;
