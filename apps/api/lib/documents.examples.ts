/**
 * OpenAPI examples of the document operations (upload, list, read, replace, metadata, delete, reprocess).
 * Assembled, and typed, in `openapi-examples.ts`.
 */
const DOCUMENT_ID = '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20';

/** The file of the first upload, and the one that replaced it. */
const FIRST_FILE = {
  storage_url: `kb://workspaces/default/documents/${DOCUMENT_ID}/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22`,
  size_bytes: 66,
  content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
};
const REPLACED_FILE = {
  storage_url: `kb://workspaces/default/documents/${DOCUMENT_ID}/uploads/0199f1c2-7a44-7004-8004-5b8e3f6a1d25`,
  size_bytes: 74,
  content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
};

/** What the examples' document is at one point of its history. */
interface DocumentState {
  readonly status: string;
  readonly version: number;
  readonly metadata?: Record<string, unknown>;
  readonly chunks: number;
  readonly tokens: number;
  readonly updatedAt: string;
}

/** The document as a list shows it. */
function documentSummary(state: DocumentState) {
  return {
    id: DOCUMENT_ID,
    document_id: DOCUMENT_ID,
    name: 'notes.md',
    mime_type: 'text/markdown',
    source: 'upload',
    status: state.status,
    version: state.version,
    metadata: state.metadata ?? { team: 'docs' },
    stats: { chunks: state.chunks, tokens: state.tokens },
    created_at: '2026-03-02T07:59:43.200Z',
    updated_at: state.updatedAt,
  };
}

/** The document as it is read alone: its summary, its latest file and the version served. */
function documentDetail(state: DocumentState, file: typeof FIRST_FILE, servedVersion: number) {
  return {
    ...documentSummary(state),
    workspace_id: 'default',
    size_bytes: file.size_bytes,
    content_hash: file.content_hash,
    storage_url: file.storage_url,
    served_version: servedVersion,
    error: null,
  };
}

export const DOCUMENT_EXAMPLES = {
  uploadDocument: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF.\n',
      metadata: { team: 'docs' },
      source: 'upload',
      source_item: 'release/notes.md',
      change_reason: 'first draft',
    },
    responses: {
      '201': {
        document_id: DOCUMENT_ID,
        name: 'notes.md',
        workspace_id: 'default',
        storage_url: FIRST_FILE.storage_url,
        mime_type: 'text/markdown',
        size_bytes: FIRST_FILE.size_bytes,
        content_hash: FIRST_FILE.content_hash,
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
          documentSummary({
            status: 'completed',
            version: 1,
            chunks: 1,
            tokens: 12,
            updatedAt: '2026-03-02T07:59:52.536Z',
          }),
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
      '200': documentDetail(
        { status: 'completed', version: 1, chunks: 1, tokens: 12, updatedAt: '2026-03-02T07:59:52.536Z' },
        FIRST_FILE,
        1,
      ),
    },
  },
  replaceDocumentContent: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.\n',
      change_reason: 'typo fixes',
    },
    responses: {
      '200': documentDetail(
        { status: 'pending', version: 2, chunks: 0, tokens: 0, updatedAt: '2026-03-02T07:59:52.962Z' },
        REPLACED_FILE,
        1,
      ),
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
      '200': documentDetail(
        {
          status: 'completed',
          version: 3,
          metadata: { team: 'docs', reviewed: true },
          chunks: 1,
          tokens: 14,
          updatedAt: '2026-03-02T07:59:54.132Z',
        },
        REPLACED_FILE,
        3,
      ),
    },
  },
  deleteDocument: {
    responses: {},
  },
  reprocessDocument: {
    responses: {
      '202': documentDetail(
        { status: 'pending', version: 4, chunks: 1, tokens: 12, updatedAt: '2026-03-02T07:59:55.246Z' },
        FIRST_FILE,
        4,
      ),
    },
  },
};
