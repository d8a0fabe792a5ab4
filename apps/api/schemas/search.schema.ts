import { Type } from '@sinclair/typebox';
import { DateTime, Metadata, Nullable, StringEnum } from './common.schema.ts';

export const SEARCH_MODES = ['hybrid', 'semantic', 'keyword'] as const;

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

/** The search filter language: search requests' `filters`, and the rules of a scoped token. */
export const SearchFiltersSchema = Type.Object(
  {
    document_ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Union([Scalar, Type.Array(Scalar, { minItems: 1, maxItems: 100 })]), {
        maxProperties: 64,
        propertyNames: { not: { const: '__proto__' } },
        description: 'Metadata `key` equals the value, or one of the values; at most 64 keys (all must match).',
      }),
    ),
    mime_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 20 })),
    created_after: Type.Optional(DateTime()),
    created_before: Type.Optional(DateTime()),
  },
  { title: 'SearchFilters', additionalProperties: false },
);

export const SearchBody = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '\\S',
      description: 'Search text (1–2000 characters).',
    }),
    as_of: Type.Optional(
      Nullable(DateTime('Search the knowledge base as it was served at this instant (ISO 8601 with offset).')),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    mode: Type.Optional(
      StringEnum(SEARCH_MODES, {
        default: 'hybrid',
        description:
          '`hybrid` (BM25 and vector similarity, each min-max normalised over its candidates, combined by `weights`), `semantic` or `keyword`. Keyword and hybrid put chunks that hold the query as a phrase (3 words or more) first.',
      }),
    ),
    weights: Type.Optional(
      Type.Object(
        {
          keyword: Type.Number({ minimum: 0, maximum: 1, description: 'Weight of the keyword (BM25) ranking.' }),
          semantic: Type.Number({ minimum: 0, maximum: 1, description: 'Weight of the semantic ranking.' }),
        },
        {
          title: 'SearchWeights',
          additionalProperties: false,
          // Not both 0: there would be nothing to rank by.
          not: { properties: { keyword: { const: 0 }, semantic: { const: 0 } } },
          description:
            "Hybrid only: how much each ranking counts (scaled to sum 1; not both 0). Default: the service's `KB_HYBRID_SEMANTIC_WEIGHT`.",
          examples: [{ keyword: 0.4, semantic: 0.6 }],
        },
      ),
    ),
    group_by: Type.Optional(
      StringEnum(['passage', 'document', 'none'] as const, {
        default: 'passage',
        description:
          '`passage`: drop a chunk whose text overlaps a better one of the same version; `document`: one result per document (its best chunk); `none`: every chunk.',
      }),
    ),
    filters: Type.Optional(SearchFiltersSchema),
    min_score: Type.Optional(Type.Number({ description: 'Drop results scoring below this.' })),
  },
  { title: 'SearchRequest', additionalProperties: false },
);

export const SearchResult = Type.Object(
  {
    chunk_id: Type.String(),
    document_id: Type.String(),
    document_name: Type.String(),
    version: Type.Integer(),
    index: Type.Integer(),
    score: Type.Number(),
    content: Type.String(),
    highlights: Type.Array(Type.String(), {
      description:
        'Up to three snippets of `content` around the query terms. The text is HTML-escaped (`&`, `<`, `>`, `"` and `\'` as `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`) and each matched term is wrapped in `<em>…</em>`, the only markup, so a snippet can be inserted as HTML.',
    }),
    metadata: Metadata,
    page: Nullable(Type.Integer()),
  },
  { title: 'SearchResult', description: 'One passage (chunk), with its document and version.' },
);

export const SearchResponse = Type.Object(
  {
    query: Type.String(),
    mode: StringEnum(SEARCH_MODES),
    as_of: Nullable(Type.String()),
    results: Type.Array(SearchResult),
    took_ms: Type.Number(),
    warnings: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'SearchResponse', description: 'Results, best first.' },
);
