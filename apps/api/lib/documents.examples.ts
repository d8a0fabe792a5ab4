/**
 * OpenAPI examples of the document operations (upload, list, read, replace, metadata, delete, reprocess).
 * Assembled, and typed, in `openapi-examples.ts`.
 */
export const DOCUMENT_EXAMPLES = {
  uploadDocument: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF.\n',
      metadata: { team: 'docs' },
      source: 'upload',
      change_reason: 'first draft',
    },
    responses: {
      '201': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        name: 'notes.md',
        workspace_id: 'default',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        status: 'pending',
        version: 1,
        message: 'Document uploaded and queued for processing.',
      },
    },
  },
  listDocuments: {
    responses: {
      '200': {
        documents: [
          {
            id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            status: 'completed',
            version: 1,
            metadata: {
              team: 'docs',
            },
            stats: {
              chunks: 1,
              tokens: 12,
            },
            created_at: '2026-03-02T07:59:43.200Z',
            updated_at: '2026-03-02T07:59:52.536Z',
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
  getDocument: {
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'completed',
        version: 1,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 1,
          tokens: 12,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:52.536Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        source: 'upload',
        served_version: 1,
        error: null,
      },
    },
  },
  replaceDocumentContent: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.\n',
      change_reason: 'typo fixes',
    },
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'pending',
        version: 2,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 0,
          tokens: 0,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:52.962Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 74,
        content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a44-7004-8004-5b8e3f6a1d25',
        source: 'upload',
        served_version: 1,
        error: null,
      },
    },
  },
  updateDocumentMetadata: {
    request: {
      metadata: {
        team: 'docs',
        reviewed: true,
      },
      change_reason: 'review',
    },
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'completed',
        version: 3,
        metadata: {
          team: 'docs',
          reviewed: true,
        },
        stats: {
          chunks: 1,
          tokens: 14,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:54.132Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 74,
        content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a44-7004-8004-5b8e3f6a1d25',
        source: 'upload',
        served_version: 3,
        error: null,
      },
    },
  },
  deleteDocument: {
    responses: {},
  },
  reprocessDocument: {
    responses: {
      '202': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'pending',
        version: 4,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 1,
          tokens: 12,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:55.246Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        source: 'upload',
        served_version: 4,
        error: null,
      },
    },
  },
};
