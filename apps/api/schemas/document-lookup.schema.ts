import { Type } from '@sinclair/typebox';
import { SOURCE_ITEM_LOOKUP_MAX } from '../../../core/model/document-records.model.ts';
import { DateTime } from './common.schema.ts';
import { VersionStatus } from './documents.schema.ts';

export const LookupBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          source: Type.String({
            minLength: 1,
            maxLength: 256,
            description: 'The `source` the document was uploaded with.',
          }),
          source_item: Type.String({
            minLength: 1,
            maxLength: 1024,
            description: 'The `source_item` it was uploaded with (exact: case and spaces count).',
          }),
        },
        { title: 'SourceItemKey', additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: SOURCE_ITEM_LOOKUP_MAX,
        description: `The (source, source_item) pairs to look up, 1 to ${SOURCE_ITEM_LOOKUP_MAX}.`,
      },
    ),
  },
  { title: 'DocumentLookup', additionalProperties: false },
);

export const LookupMatch = Type.Object(
  {
    source: Type.String(),
    source_item: Type.String(),
    document_id: Type.String({ format: 'uuid' }),
    name: Type.String({ description: 'File name of the latest version.' }),
    version: Type.Integer({ minimum: 1, description: 'The latest version.' }),
    status: VersionStatus,
    content_hash: Type.String({ description: 'SHA-256 of the latest version’s file, hex.' }),
    size_bytes: Type.Integer(),
    updated_at: DateTime(),
  },
  { title: 'DocumentLookupMatch', description: 'A document found by the (source, source_item) it was uploaded with.' },
);

export const LookupResponse = Type.Object(
  {
    documents: Type.Array(LookupMatch, {
      description:
        'The documents (not deleted) uploaded with one of the pairs, ordered by source, item, then creation; a pair that matches nothing is absent, one uploaded twice without an Idempotency-Key answers both documents.',
    }),
  },
  { title: 'DocumentLookupResult' },
);
