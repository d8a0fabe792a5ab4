import type { Json } from './opensearch-http.ts';

/** The six indexes of one store, all named after its prefix. */
export interface IndexNames {
  readonly documents: string;
  readonly versions: string;
  readonly chunks: string;
  readonly vectorCache: string;
  readonly meta: string;
  /** Pending notifications of purged documents (`NotificationOutbox`). */
  readonly outbox: string;
}

export function indexNames(prefix: string): IndexNames {
  return {
    documents: `${prefix}-documents`,
    versions: `${prefix}-versions`,
    chunks: `${prefix}-chunks`,
    vectorCache: `${prefix}-vector-cache`,
    meta: `${prefix}-meta`,
    outbox: `${prefix}-outbox`,
  };
}

/** Timestamps: canonical ISO strings in `_source`, indexed as dates so ranges compare instants. */
const DATE = { type: 'date', format: 'strict_date_optional_time' } as const;
const KEYWORD = { type: 'keyword' } as const;
/** Kept in `_source` only: never searched, never sorted. */
const STORED_KEYWORD = { type: 'keyword', index: false, doc_values: false } as const;
const STORED_INTEGER = { type: 'long', index: false, doc_values: false } as const;
/** Free-form JSON kept in `_source` only, so any key or value shape is accepted. */
const OPAQUE = { type: 'object', enabled: false } as const;

/**
 * Longest `metadata_kv` token indexed: Lucene refuses terms over 32766 bytes, and a character
 * takes at most 4 bytes in UTF-8. A longer metadata value is kept but not filterable.
 */
const KV_IGNORE_ABOVE = 8000;

/**
 * Name of the k-NN field for vectors of `dimensions`: one field per dimension count, added to the
 * chunks mapping when an index model of that size is set, so switching models never needs a new
 * index (vectors of the old model are removed from the chunks, the old field stays empty).
 */
export function vectorField(dimensions: number): string {
  return `vector_d${dimensions}`;
}

export const VECTOR_FIELD_PREFIX = 'vector_d';

/** Mapping of a vector field: HNSW in Lucene with cosine similarity (the only engine of the target builds). */
export function vectorFieldMapping(dimensions: number): Json {
  return {
    type: 'knn_vector',
    dimension: dimensions,
    method: {
      name: 'hnsw',
      engine: 'lucene',
      space_type: 'cosinesimil',
      parameters: { m: 16, ef_construction: 128 },
    },
  };
}

/**
 * Text analysis of chunk content and queries: Unicode words (UAX #29), lower-cased, diacritics
 * folded, Porter-stemmed. A colon or period between letters separates words (`title:fox` is
 * `title` and `fox`), which UAX #29 alone would keep together.
 */
const TEXT_ANALYSIS = {
  char_filter: {
    kb_split_letters: {
      type: 'pattern_replace',
      pattern: '(?<=\\p{L})[.:\\u00B7\\u2027\\uFE13\\uFE55\\uFF1A\\uFF0E](?=\\p{L})',
      replacement: ' ',
    },
  },
  analyzer: {
    kb_text: {
      type: 'custom',
      char_filter: ['kb_split_letters'],
      tokenizer: 'standard',
      filter: ['lowercase', 'asciifolding', 'porter_stem'],
    },
  },
};

const DOCUMENT_PROPERTIES = {
  id: KEYWORD,
  workspace_id: KEYWORD,
  source: KEYWORD,
  source_item: KEYWORD,
  created_at: DATE,
  updated_at: DATE,
  deleted_at: DATE,
  latest_version: { type: 'integer' },
  served_version: { type: 'integer' },
  status: KEYWORD,
  rev: { type: 'long' },
  served: OPAQUE,
  deleted_by: KEYWORD,
  // The pending notification of its deletion (`NotificationOutbox`): listed by `at`, its body kept only.
  notification: { properties: { id: KEYWORD, at: DATE, body: STORED_KEYWORD } },
};

const VERSION_PROPERTIES = {
  document_id: KEYWORD,
  workspace_id: KEYWORD,
  version: { type: 'integer' },
  status: KEYWORD,
  name: STORED_KEYWORD,
  mime_type: KEYWORD,
  size_bytes: STORED_INTEGER,
  content_hash: STORED_KEYWORD,
  storage_key: STORED_KEYWORD,
  metadata: OPAQUE,
  change_reason: STORED_KEYWORD,
  restored_from: STORED_INTEGER,
  created_by: STORED_KEYWORD,
  created_at: DATE,
  completed_at: DATE,
  served_from: DATE,
  served_until: DATE,
  served_rev: { type: 'long' },
  chunk_count: STORED_INTEGER,
  tokens: STORED_INTEGER,
  embedding_model: KEYWORD,
  error: OPAQUE,
  progress: OPAQUE,
  archived_at: DATE,
  write_key: KEYWORD,
};

const CHUNK_PROPERTIES = {
  id: KEYWORD,
  document_id: KEYWORD,
  workspace_id: KEYWORD,
  version: { type: 'integer' },
  idx: { type: 'integer' },
  content: { type: 'text', analyzer: 'kb_text' },
  content_hash: STORED_KEYWORD,
  tokens: STORED_INTEGER,
  start_offset: STORED_INTEGER,
  end_offset: STORED_INTEGER,
  page: STORED_INTEGER,
  metadata: OPAQUE,
  model: KEYWORD,
  // Copied from the chunk's version and document so search filters need no join.
  served_from: DATE,
  served_until: DATE,
  served_rev: { type: 'long' },
  v_name: STORED_KEYWORD,
  v_mime_type: KEYWORD,
  v_metadata: OPAQUE,
  v_metadata_kv: { type: 'keyword', ignore_above: KV_IGNORE_ABOVE },
  d_created_at: DATE,
};

const VECTOR_CACHE_PROPERTIES = {
  model: KEYWORD,
  content_hash: KEYWORD,
  vector: { type: 'binary' },
};

/** A pending notification kept past its document's purge. */
const OUTBOX_PROPERTIES = {
  id: KEYWORD,
  workspace_id: KEYWORD,
  document_id: KEYWORD,
  at: DATE,
  body: STORED_KEYWORD,
};

const META_PROPERTIES = {
  model: KEYWORD,
  dimensions: { type: 'integer' },
};

export interface IndexDefinition {
  readonly name: string;
  readonly settings: Json;
  readonly mappings: { readonly dynamic: 'strict'; readonly properties: Json };
}

/** Settings and strict mappings of every index; the chunks index has k-NN enabled. */
export function indexDefinitions(
  names: IndexNames,
  layout: {
    readonly shards: number;
    readonly replicas: number;
    readonly maxResultWindow: number;
    /** `index.refresh_interval` of the documents index, e.g. `250ms`. */
    readonly documentsRefreshInterval: string;
  },
): IndexDefinition[] {
  const base = {
    number_of_shards: layout.shards,
    number_of_replicas: layout.replicas,
    max_result_window: layout.maxResultWindow,
  };
  const definition = (name: string, properties: Json, settings: Json = {}): IndexDefinition => ({
    name,
    settings: { index: { ...base, ...settings } },
    mappings: { dynamic: 'strict', properties },
  });
  return [
    definition(names.documents, DOCUMENT_PROPERTIES, { refresh_interval: layout.documentsRefreshInterval }),
    definition(names.versions, VERSION_PROPERTIES),
    {
      ...definition(names.chunks, CHUNK_PROPERTIES, { knn: true }),
      settings: { index: { ...base, knn: true }, analysis: TEXT_ANALYSIS },
    },
    definition(names.vectorCache, VECTOR_CACHE_PROPERTIES),
    definition(names.meta, META_PROPERTIES),
    definition(names.outbox, OUTBOX_PROPERTIES),
  ];
}
