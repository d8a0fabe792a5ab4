import { Type } from '@sinclair/typebox';
import { DateTime, IngestError, Metadata, Nullable, Pagination, StringEnum } from './common.schema.ts';

export const VERSION_STATUS_VALUES = ['pending', 'processing', 'completed', 'failed'] as const;
export const VersionStatus = StringEnum(VERSION_STATUS_VALUES, { title: 'VersionStatus' });

export const DocumentListItem = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Document id; the same value as `document_id`.' }),
    document_id: Type.String({ format: 'uuid' }),
    name: Type.String({ description: 'File name of the latest version.' }),
    mime_type: Type.String({ description: 'Detected type of the latest version.' }),
    source: Type.String({
      description:
        'Where the document comes from: `upload` unless the upload named one, or the name of the source of synchronisation that keeps it.',
    }),
    source_item: Type.Optional(
      Nullable(
        Type.String({
          description:
            'For a document a source synchronises: its path, object key or URL within the source; null otherwise. Present on reads, absent from write responses.',
        }),
      ),
    ),
    status: VersionStatus,
    version: Type.Integer({ minimum: 1 }),
    metadata: Metadata,
    stats: Type.Object({ chunks: Type.Integer(), tokens: Type.Integer() }, { title: 'DocumentStats' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'DocumentListItem', description: 'A document as lists show it.' },
);

export const Document = Type.Composite(
  [
    DocumentListItem,
    Type.Object({
      workspace_id: Type.String(),
      size_bytes: Type.Integer(),
      content_hash: Type.String({ description: 'SHA-256 of the file, hex.' }),
      storage_url: Type.String(),
      served_version: Nullable(Type.Integer({ description: 'Version current search serves, if any.' })),
      error: Nullable(IngestError),
      progress: Type.Optional(
        Type.Object(
          {
            stage: StringEnum(['parse', 'chunk', 'embed', 'index'] as const),
            chunks_done: Type.Integer({ minimum: 0, description: 'Chunks the stage has finished.' }),
            chunks_total: Type.Integer({ minimum: 0, description: 'Chunks of the version; 0 until it is chunked.' }),
          },
          {
            title: 'IngestProgress',
            description: 'Present while the version is `processing`: how far its ingestion is.',
          },
        ),
      ),
    }),
  ],
  { title: 'Document', description: 'The document with its current version.' },
);

export const UploadResponse = Type.Object(
  {
    document_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    workspace_id: Type.String(),
    storage_url: Type.String(),
    mime_type: Type.String(),
    size_bytes: Type.Integer(),
    content_hash: Type.String(),
    status: Type.Literal('pending'),
    version: Type.Integer(),
    message: Type.String(),
  },
  { title: 'UploadResult', description: 'Stored and queued for ingestion.' },
);

/**
 * The `metadata` form field as the OpenAPI document describes it: a JSON object sent as the text of
 * the part (`encoding` says `application/json`). The server reads and checks it in code.
 */
const FormMetadata = (description: string) =>
  Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    maxProperties: 64,
    propertyNames: { maxLength: 128, not: { const: '__proto__' } },
    properties: { change_reason: { type: ['string', 'null'], maxLength: 2000 } },
    description,
  });

export const UploadForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The file (up to 52428800 bytes).' }),
    metadata: Type.Optional(
      FormMetadata(
        'The metadata, a JSON object: at most 64 keys (a `change_reason` key counts), keys up to 128 characters, at most 16 KiB serialised, nested at most 32 levels. A `change_reason` key is moved to the version.',
      ),
    ),
    source: Type.Optional(
      Type.String({ maxLength: 256, description: 'Where the document comes from (default `upload`).' }),
    ),
    source_item: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'The item within `source` the document stands for (a path relative to the loaded folder, an object key, a URL): read back as `source_item`, and found again by `POST /documents/lookup`.',
      }),
    ),
    change_reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  {
    title: 'UploadForm',
    required: ['file'],
    additionalProperties: false,
    description: 'Unknown form fields are refused (422).',
  },
);

export const ReplaceForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The new content (up to 52428800 bytes).' }),
    metadata: Type.Optional(
      FormMetadata('A JSON object replacing the metadata (same limits as on upload); omitted keeps it.'),
    ),
    change_reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  {
    title: 'ReplaceForm',
    required: ['file'],
    additionalProperties: false,
    description: 'Unknown form fields are refused (422).',
  },
);

export const ListDocumentsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Cursor mode page size (default 20).' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'Offset mode (with or without `page_size`); at most 1,000,000 (use cursor mode to go further).',
    }),
  ),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: 'Offset mode page size (default 20).' }),
  ),
  status: Type.Optional(VersionStatus),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  created_after: Type.Optional(DateTime()),
  created_before: Type.Optional(DateTime()),
});

export const DocumentListCursor = Type.Object(
  { documents: Type.Array(DocumentListItem), pagination: Pagination },
  { title: 'DocumentList', description: 'Cursor paging: a page of documents and where the next one starts.' },
);

export const DocumentListOffset = Type.Object(
  { documents: Type.Array(DocumentListItem), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() },
  { title: 'DocumentPage', description: 'Offset paging: one numbered page of documents.' },
);

export const DocumentListResponse = Type.Union([DocumentListCursor, DocumentListOffset], {
  title: 'DocumentListResponse',
  description: 'A page of documents, newest first.',
});

export const PatchBody = Type.Object(
  {
    metadata: Type.Record(Type.String(), Type.Unknown(), {
      // JSON bodies holding a `__proto__` key are refused before validation (422 naming the key).
      propertyNames: { not: { const: '__proto__' } },
      description:
        'The new metadata (replaces the current one), with the limits of the upload form: at most 64 keys (a `change_reason` key counts), keys up to 128 characters, at most 16 KiB serialised, nested at most 32 levels. A `change_reason` key is moved to the version. No `__proto__` key, at any depth.',
    }),
    change_reason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { title: 'MetadataUpdate', additionalProperties: false },
);

export const DeleteQuery = Type.Object({
  purge: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Remove every version, file, chunk and vector now instead of keeping history for point-in-time search.',
    }),
  ),
});
