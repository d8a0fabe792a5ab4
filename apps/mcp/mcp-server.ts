/**
 * The Model Context Protocol server: the knowledge base's read and search use cases as MCP tools
 * (`search`, `get_document`, `get_chunks`, `list_documents`, `list_versions`, `compare_versions`),
 * answering text with a citation (document name, id, version, chunk) for every passage. It calls
 * the services directly, with the same workspace scoping and permissions as the REST API: `search`
 * needs the key's `search` permission, every other tool `read`. The transports (Streamable HTTP at
 * `/mcp`, stdio for `kb mcp`) only decide how a caller's key becomes an {@link McpAccess}.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isKbError } from '../../core/errors/kb-error.ts';
import type { Permission } from '../../core/model/account-records.model.ts';
import type { SearchFilters } from '../../core/model/search-filters.model.ts';
import type { RequestContext, Services } from '../../core/services/services.ts';
import {
  chunksText,
  compareText,
  contextText,
  documentListText,
  documentText,
  searchText,
  versionsText,
} from './mcp-text.ts';

/**
 * Who calls, checked for each tool call: resolves the request context when the caller's key holds
 * `permission` (a KbError `forbidden` when it does not, `unauthorized` when the key is no longer valid).
 */
export type McpAccess = (permission: Permission) => Promise<RequestContext>;

export interface McpServerDeps {
  readonly services: Pick<Services, 'search' | 'documents' | 'versions' | 'chunks'>;
  readonly version: string;
  readonly access: McpAccess;
  /** Told about a failure that is not one of the service's own errors (its text is not shown to the caller). */
  readonly onInternalError?: (error: unknown) => void;
}

/** `get_document` shows at most this much of a document's text; `get_chunks` pages through the rest. */
export const GET_DOCUMENT_MAX_CHARS = 20_000;

const documentId = z.string().min(1).max(100).describe('The document id (`document_id` in other answers).');
const cursor = z.string().min(1).max(2048).optional().describe('Where the previous answer left off ("More: …").');
const scalar = z.union([z.string(), z.number(), z.boolean()]);
const instant = z.iso.datetime({ offset: true });

/**
 * A tool's arguments: exactly these fields. An argument the tool does not take is refused (the SDK
 * answers `Input validation error: … Unrecognized key: "…"`, code -32602) rather than dropped, so a
 * misspelt filter never widens an answer; the listed JSON Schema says `additionalProperties: false`.
 */
const exactly = <T extends z.ZodRawShape>(shape: T) => z.object(shape).strict();

const searchInput = exactly({
  query: z.string().min(1).max(2000).regex(/\S/).describe('What to look for (1–2000 characters).'),
  mode: z
    .enum(['hybrid', 'semantic', 'keyword'])
    .optional()
    .describe('`hybrid` (default: keyword and semantic combined), `semantic` (meaning) or `keyword` (BM25 words).'),
  filters: z
    .object({
      document_ids: z.array(z.string().min(1)).max(1000).optional().describe('Only these documents.'),
      metadata: z
        .record(z.string(), z.union([scalar, z.array(scalar).min(1).max(100)]))
        .optional()
        .describe('Metadata key equals the value, or one of the values; every key must match.'),
      mime_types: z
        .array(z.string().min(1))
        .max(20)
        .optional()
        .describe('Only these detected types, e.g. text/markdown.'),
      created_after: instant.optional().describe('Documents created after this instant (ISO 8601 with offset).'),
      created_before: instant.optional().describe('Documents created before this instant.'),
    })
    .strict()
    .optional(),
  as_of: instant
    .optional()
    .describe('Search the knowledge base as it was served at this instant (ISO 8601 with offset).'),
  limit: z.number().int().min(1).max(100).optional().describe('At most this many results (default 10).'),
});

function toFilters(f: z.infer<typeof searchInput>['filters']): SearchFilters {
  if (!f) return {};
  return {
    ...(f.document_ids !== undefined ? { documentIds: f.document_ids } : {}),
    ...(f.metadata !== undefined
      ? { metadata: Object.fromEntries(Object.entries(f.metadata).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])) }
      : {}),
    ...(f.mime_types !== undefined ? { mimeTypes: f.mime_types } : {}),
    ...(f.created_after !== undefined ? { createdAfter: f.created_after } : {}),
    ...(f.created_before !== undefined ? { createdBefore: f.created_before } : {}),
  };
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

/** Builds a server with the six tools; connect it to one transport. */
export function createKbMcpServer(deps: McpServerDeps): McpServer {
  const { services, access } = deps;
  const server = new McpServer(
    { name: 'kb-document-service', version: deps.version },
    {
      instructions:
        'A versioned knowledge base of uploaded documents. Use `search` to find passages, then cite them as given ' +
        '(document name, id, version, chunk). `get_document`, `get_chunks`, `list_versions` and `compare_versions` ' +
        'read one document; `list_documents` lists the workspace.',
    },
  );

  /** Runs a tool as the caller with `permission`; the service's own errors become a tool error the caller reads. */
  const run =
    <A>(permission: Permission, body: (ctx: RequestContext, args: A) => Promise<string>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return text(await body(await access(permission), args));
      } catch (error) {
        if (isKbError(error))
          return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
        deps.onInternalError?.(error);
        return { isError: true, content: [{ type: 'text', text: 'internal-error: the service failed to answer.' }] };
      }
    };

  const nameOf = async (ctx: RequestContext, id: string) => (await services.documents.get(ctx, id)).name;
  const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool(
    'search',
    {
      title: 'Search the knowledge base',
      description:
        'Finds the passages (chunks) that best match a query, best first, each with its citation. ' +
        'With `as_of`, searches the versions that were served at that instant. Needs the `search` permission.',
      inputSchema: searchInput,
      annotations: readOnly,
    },
    run('search', async (ctx, args) =>
      searchText(
        await services.search.search(ctx, {
          query: args.query,
          mode: args.mode ?? 'hybrid',
          limit: args.limit ?? 10,
          asOf: args.as_of ?? null,
          filters: toFilters(args.filters),
        }),
      ),
    ),
  );

  server.registerTool(
    'get_document',
    {
      title: 'Read a document',
      description: `A document's details (status, versions, type, metadata) and the text of its served version (up to ${GET_DOCUMENT_MAX_CHARS} characters).`,
      inputSchema: exactly({ document_id: documentId }),
      annotations: readOnly,
    },
    run('read', async (ctx, args) => {
      const view = await services.documents.get(ctx, args.document_id);
      if (view.served_version === null) return documentText(view, 'No version is served yet, so there is no text.');
      const context = await services.chunks.context(ctx, args.document_id, { version: view.served_version, window: 0 });
      return documentText(view, 'content' in context ? contextText(view.name, context, GET_DOCUMENT_MAX_CHARS) : null);
    }),
  );

  server.registerTool(
    'get_chunks',
    {
      title: "Read a document's chunks",
      description:
        'The chunks of a version (default: the served one) in document order, each with its citation; page with `cursor`.',
      inputSchema: exactly({
        document_id: documentId,
        version: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe('Which version (default: the served one, else the latest).'),
        limit: z.number().int().min(1).max(100).optional().describe('Chunks per answer (default 20).'),
        cursor,
      }),
      annotations: readOnly,
    },
    run('read', async (ctx, args) => {
      const name = await nameOf(ctx, args.document_id);
      const view = await services.chunks.chunks(ctx, args.document_id, {
        limit: args.limit ?? 20,
        ...(args.version !== undefined ? { version: args.version } : {}),
        ...(args.cursor !== undefined ? { cursor: args.cursor } : {}),
      });
      return chunksText(name, view);
    }),
  );

  server.registerTool(
    'list_documents',
    {
      title: 'List documents',
      description: "The workspace's documents, newest first, with status, type and metadata; page with `cursor`.",
      inputSchema: exactly({
        status: z
          .enum(['pending', 'processing', 'completed', 'failed'])
          .optional()
          .describe('Only documents in this status.'),
        source: z.string().min(1).max(256).optional().describe('Only documents from this source.'),
        limit: z.number().int().min(1).max(100).optional().describe('Documents per answer (default 20).'),
        cursor,
      }),
      annotations: readOnly,
    },
    run('read', async (ctx, args) => {
      const result = await services.documents.list(ctx, {
        limit: args.limit ?? 20,
        ...(args.status !== undefined ? { status: args.status } : {}),
        ...(args.source !== undefined ? { source: args.source } : {}),
        ...(args.cursor !== undefined ? { cursor: args.cursor } : {}),
      });
      if (result.mode !== 'cursor') throw new Error('the documents service answered a page instead of a cursor list');
      return documentListText(result.documents, result.pagination);
    }),
  );

  server.registerTool(
    'list_versions',
    {
      title: "List a document's versions",
      description: 'Every version of a document, newest first: status, when it was served, change reason, rollbacks.',
      inputSchema: exactly({ document_id: documentId }),
      annotations: readOnly,
    },
    run('read', async (ctx, args) => {
      const history = await services.versions.history(ctx, args.document_id);
      const name = history.versions[0]?.name ?? (await nameOf(ctx, args.document_id));
      return versionsText(name, history.document_id, history.versions);
    }),
  );

  server.registerTool(
    'compare_versions',
    {
      title: 'Compare two versions',
      description: 'A chunk-level diff between two versions of a document: added, removed and modified chunks.',
      inputSchema: exactly({
        document_id: documentId,
        from: z.number().int().min(1).describe('The older version.'),
        to: z.number().int().min(1).describe('The newer version.'),
      }),
      annotations: readOnly,
    },
    run('read', async (ctx, args) => {
      const view = await services.versions.compare(ctx, args.document_id, args.from, args.to);
      return compareText(await nameOf(ctx, args.document_id), view);
    }),
  );

  return server;
}
