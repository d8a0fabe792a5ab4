import { Type } from '@sinclair/typebox';
import { DateTime, IngestError, Metadata, Nullable } from './common.schema.ts';
import { VersionStatus } from './documents.schema.ts';

export const VersionParams = Type.Object({
  id: Type.String({ description: 'Document id (UUID).' }),
  version: Type.Integer({ minimum: 1 }),
});

export const Version = Type.Object(
  {
    version: Type.Integer(),
    created_at: DateTime(),
    created_by: Type.String({ description: 'Id of the API key that created the version.' }),
    size_bytes: Type.Integer(),
    chunk_count: Type.Integer(),
    status: VersionStatus,
    change_reason: Nullable(Type.String()),
    restored_from: Nullable(Type.Integer()),
    content_hash: Type.String(),
    name: Type.String(),
    mime_type: Type.String(),
    tokens: Type.Integer(),
    served_from: Nullable(DateTime()),
    served_until: Nullable(DateTime()),
    archived: Type.Boolean(),
    error: Nullable(IngestError),
  },
  { title: 'Version', description: 'One version of a document.' },
);

export const VersionList = Type.Object(
  { document_id: Type.String(), versions: Type.Array(Version) },
  { title: 'VersionList', description: 'Versions, newest first.' },
);

export const VersionDetail = Type.Composite(
  [Version, Type.Object({ metadata: Metadata, storage_url: Type.String() })],
  { title: 'VersionDetail', description: 'One version with its metadata.' },
);

export const CompareQuery = Type.Object({
  from: Type.Integer({ minimum: 1 }),
  to: Type.Integer({ minimum: 1 }),
});

const DiffEntry = Type.Union(
  [
    Type.Object(
      { type: Type.Literal('added'), from_index: Type.Null(), to_index: Type.Integer(), content: Type.String() },
      { title: 'AddedChunk' },
    ),
    Type.Object(
      { type: Type.Literal('removed'), from_index: Type.Integer(), to_index: Type.Null(), content: Type.String() },
      { title: 'RemovedChunk' },
    ),
    Type.Object(
      {
        type: Type.Literal('modified'),
        from_index: Type.Integer(),
        to_index: Type.Integer(),
        old_content: Type.String(),
        new_content: Type.String(),
      },
      { title: 'ModifiedChunk' },
    ),
  ],
  { title: 'DiffEntry', description: 'One difference between the two versions, by chunk.' },
);

export const CompareResponse = Type.Object(
  {
    document_id: Type.String(),
    from_version: Type.Integer(),
    to_version: Type.Integer(),
    changes: Type.Object(
      {
        added_chunks: Type.Integer(),
        removed_chunks: Type.Integer(),
        modified_chunks: Type.Integer(),
        unchanged_chunks: Type.Integer(),
        diff: Type.Array(DiffEntry),
      },
      { title: 'VersionChanges' },
    ),
  },
  { title: 'VersionComparison', description: 'Chunk-level differences.' },
);

export const RollbackBody = Type.Object(
  { target_version: Type.Integer({ minimum: 1, description: 'The version whose content and metadata come back.' }) },
  { title: 'RollbackRequest', additionalProperties: false },
);

export const RollbackResponse = Type.Object(
  {
    document_id: Type.String(),
    version: Type.Integer(),
    restored_from: Type.Integer(),
    status: VersionStatus,
  },
  { title: 'RollbackResult', description: "The new version (with version N's content, chunks and vectors)." },
);
