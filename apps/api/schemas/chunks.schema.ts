import { Type } from '@sinclair/typebox';
import { Metadata, Nullable, Pagination } from './common.schema.ts';

export const ChunkParams = Type.Object({
  document_id: Type.String({ description: 'Document id (UUID).' }),
});

export const Chunk = Type.Object(
  {
    id: Type.String({ description: '`<document_id>:<version>:<index>`' }),
    index: Type.Integer(),
    content: Type.String(),
    tokens: Type.Integer(),
    start_offset: Type.Integer(),
    end_offset: Type.Integer(),
    page: Nullable(Type.Integer()),
    metadata: Metadata,
  },
  { title: 'Chunk', description: 'One chunk of a version, with its place in the text.' },
);

export const ChunksQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'Another version than the current one.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 1000 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
});

export const ChunksResponse = Type.Object(
  {
    document_id: Type.String(),
    version: Type.Integer(),
    chunks: Type.Array(Chunk),
    pagination: Pagination,
  },
  { title: 'ChunkList', description: 'Chunks in index order.' },
);

export const ContextQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1 })),
  chunk_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'Return this chunk with its neighbours instead.' }),
  ),
  window: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 20, default: 2, description: 'Neighbours on each side of `chunk_id`.' }),
  ),
});

export const ContextResponse = Type.Union(
  [
    Type.Object(
      {
        document_id: Type.String(),
        version: Type.Integer(),
        content: Type.String(),
        tokens: Type.Integer(),
        chunk_count: Type.Integer(),
      },
      { title: 'DocumentText', description: 'The whole extracted text of the version.' },
    ),
    Type.Object(
      {
        document_id: Type.String(),
        version: Type.Integer(),
        chunk_id: Type.String(),
        window: Type.Integer(),
        chunks: Type.Array(Chunk),
      },
      { title: 'ChunkWindow', description: 'A chunk with its neighbours.' },
    ),
  ],
  { title: 'DocumentContext', description: 'The extracted text, or a chunk with its neighbours.' },
);
