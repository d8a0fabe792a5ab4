/**
 * OpenAPI examples of the version operations (list, compare, read, roll back).
 * Assembled, and typed, in `openapi-examples.ts`.
 */
/** Version 1 of the example document, as the version list and the version detail show it. */
const VERSION_ONE = {
  version: 1,
  created_at: '2026-03-02T07:59:43.200Z',
  created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
  size_bytes: 66,
  chunk_count: 1,
  status: 'completed',
  change_reason: null,
  restored_from: null,
  content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
  name: 'notes.md',
  mime_type: 'text/markdown',
  tokens: 12,
  served_from: '2026-03-02T07:59:52.536Z',
  served_until: '2026-03-02T07:59:53.680Z',
  archived: false,
  error: null,
};

export const VERSION_EXAMPLES = {
  listVersions: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        versions: [
          {
            version: 3,
            created_at: '2026-03-02T07:59:53.852Z',
            created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            size_bytes: 74,
            chunk_count: 1,
            status: 'completed',
            change_reason: 'review',
            restored_from: null,
            content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
            name: 'notes.md',
            mime_type: 'text/markdown',
            tokens: 14,
            served_from: '2026-03-02T07:59:54.132Z',
            served_until: null,
            archived: false,
            error: null,
          },
          {
            version: 2,
            created_at: '2026-03-02T07:59:52.962Z',
            created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            size_bytes: 74,
            chunk_count: 1,
            status: 'completed',
            change_reason: 'typo fixes',
            restored_from: null,
            content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
            name: 'notes.md',
            mime_type: 'text/markdown',
            tokens: 14,
            served_from: '2026-03-02T07:59:53.680Z',
            served_until: '2026-03-02T07:59:54.132Z',
            archived: false,
            error: null,
          },
          VERSION_ONE,
        ],
      },
    },
  },
  compareVersions: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        from_version: 1,
        to_version: 2,
        changes: {
          added_chunks: 0,
          removed_chunks: 0,
          modified_chunks: 1,
          unchanged_chunks: 0,
          diff: [
            {
              type: 'modified',
              from_index: 0,
              to_index: 0,
              old_content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF.',
              new_content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            },
          ],
        },
      },
    },
  },
  getVersion: {
    responses: {
      '200': {
        ...VERSION_ONE,
        metadata: {
          team: 'docs',
        },
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
      },
    },
  },
  rollbackDocument: {
    request: {
      target_version: 1,
    },
    responses: {
      '201': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 4,
        restored_from: 1,
        status: 'completed',
      },
    },
  },
};
