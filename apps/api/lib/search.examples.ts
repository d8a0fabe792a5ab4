/**
 * OpenAPI examples of the chunk, context, search and scoped-token operations.
 * Assembled, and typed, in `openapi-examples.ts`.
 */
export const SEARCH_EXAMPLES = {
  listChunks: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 3,
        chunks: [
          {
            id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20:3:0',
            index: 0,
            content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            tokens: 14,
            start_offset: 0,
            end_offset: 71,
            page: null,
            metadata: {
              headings: ['Release notes'],
            },
          },
        ],
        pagination: {
          has_more: false,
          next_cursor: null,
          total: 1,
        },
      },
    },
  },
  getDocumentContext: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 3,
        content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
        tokens: 14,
        chunk_count: 1,
      },
    },
  },
  search: {
    request: {
      query: 'export dashboard reports',
      mode: 'hybrid',
      limit: 5,
      filters: {
        metadata: {
          team: 'docs',
        },
      },
    },
    responses: {
      '200': {
        query: 'export dashboard reports',
        mode: 'hybrid',
        as_of: null,
        results: [
          {
            chunk_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20:3:0',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            document_name: 'notes.md',
            version: 3,
            index: 0,
            score: 1,
            content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            highlights: ['Release notes The aurora <em>dashboard</em> now exports <em>reports</em> as PDF and CSV.'],
            metadata: {
              team: 'docs',
              reviewed: true,
            },
            page: null,
          },
        ],
        took_ms: 41.7,
      },
    },
  },
  createToken: {
    request: {
      expires_in: 3600,
      permissions: ['search', 'read'],
      filters: { metadata: { customer: 'acme', status: 'published' } },
      sources: ['help-centre'],
    },
    responses: {
      '201': {
        token:
          'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ3cyI6ImRlZmF1bHQiLCJwZXJtcyI6WyJyZWFkIiwic2VhcmNoIl19.4hS3v2x1Yk1mQpW0c9Jr8nTqZ7sB6dLaE5fGhKoMuIw',
        token_type: 'Bearer',
        expires_at: '2026-03-14T10:00:00.000Z',
        workspace_id: 'default',
        parent_key_id: '5b0e8f3c-2d4a-4c6b-9e1f-7a8b9c0d1e2f',
        permissions: ['read', 'search'],
        filters: { metadata: { customer: ['acme'], status: ['published'] } },
        sources: ['help-centre'],
      },
    },
  },
};
