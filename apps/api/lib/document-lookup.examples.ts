/** OpenAPI examples of `POST /documents/lookup`. Assembled, and typed, in `openapi-examples.ts`. */
export const DOCUMENT_LOOKUP_EXAMPLES = {
  lookupDocuments: {
    request: {
      items: [
        { source: 'handbook', source_item: 'guide/index.md' },
        { source: 'handbook', source_item: 'api/index.md' },
      ],
    },
    responses: {
      '200': {
        documents: [
          {
            source: 'handbook',
            source_item: 'guide/index.md',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            name: 'guide/index.md',
            version: 2,
            status: 'completed',
            content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
            size_bytes: 74,
            updated_at: '2026-03-02T08:05:00.000Z',
          },
        ],
      },
    },
  },
};
