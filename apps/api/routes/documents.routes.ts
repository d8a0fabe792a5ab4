import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type FieldError, KbError } from '../../../core/errors/kb-error.ts';
import type { ListDocumentsQuery } from '../../../core/services/documents.service.ts';
import type { Services } from '../../../core/services/services.ts';
import { displayTextProblem } from '../../../core/util/display-text.ts';
import { createListPageCache, sendJsonText } from '../lib/list-page-cache.ts';
import { type MetadataInput, readMetadataInput } from '../lib/metadata-input.ts';
import { stringField, type UploadedFile, withUploadedFile } from '../lib/upload-form.ts';
import type { UploadSlots } from '../lib/upload-slots.ts';
import { requestContext } from '../plugins/auth.plugin.ts';
import { claimIdempotencyKey, sendReplay, writeKeyOf } from '../plugins/idempotency.plugin.ts';
import { isUuid } from '../plugins/request-id.plugin.ts';
import { AUTHENTICATED_ERRORS, DocumentIdParams, problemResponses } from '../schemas/common.schema.ts';
import {
  DeleteQuery,
  Document,
  DocumentListResponse,
  ListDocumentsQuery as ListQuerySchema,
  PatchBody,
  ReplaceForm,
  UploadForm,
  UploadResponse,
} from '../schemas/documents.schema.ts';

export interface RoutesOptions {
  readonly services: Services;
  /** Concurrent uploads per key (shared by both prefixes); none: unbounded. */
  readonly uploadSlots?: UploadSlots;
}

/** A path id that is not a UUID names no document: 404, like any unknown id. */
export function documentIdOf(id: string): string {
  if (!isUuid(id)) throw new KbError('not-found', `Document ${id} not found.`);
  return id.toLowerCase();
}

const SOURCE_MAX = 256;
const SOURCE_ITEM_MAX = 1024;

/** What is wrong with a sent `source_item` (empty, too long, unsafe characters); none when absent. */
function sourceItemProblems(sent: string | undefined): FieldError[] {
  if (sent === undefined) return [];
  if (sent === '') return [{ field: 'source_item', message: 'must not be empty' }];
  if ([...sent].length > SOURCE_ITEM_MAX) {
    return [{ field: 'source_item', message: `must be at most ${SOURCE_ITEM_MAX} characters` }];
  }
  const unsafe = displayTextProblem(sent);
  return unsafe === undefined ? [] : [{ field: 'source_item', message: unsafe }];
}

const documentsRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services, uploadSlots }) => {
  const { documents, documentWrites, uploads, idempotency, backlog } = services;
  /** Holds one of the key's upload slots until the response is sent (or the connection drops). */
  const takeUploadSlot = (
    request: { raw: NodeJS.EventEmitter },
    keyId: string,
    reply: { raw: NodeJS.EventEmitter },
  ) => {
    if (!uploadSlots) return;
    const release = uploadSlots.acquire(keyId);
    reply.raw.once('close', release);
    request.raw.once('close', release);
  };
  const listPages = createListPageCache();
  /**
   * Takes room in the workspace's ingestion backlog for a write that queues ingestion, before its
   * body is read (429 or 503 with `Retry-After` when there is none); the room is given back when
   * the response ends, unless the write called `accepted` on the ticket.
   */
  const admitIngestion = async (workspaceId: string, reply: { raw: NodeJS.EventEmitter }) => {
    const ticket = await backlog.admit(workspaceId);
    // The response's close, sent or cut off (the request's comes as soon as its body is read).
    reply.raw.once('close', ticket.release);
    return ticket;
  };

  /**
   * Claims the request's `Idempotency-Key` for the form it uploaded. True when the stored answer
   * was sent instead: the staged file is discarded first (as it is when the claim fails).
   */
  const replayedUpload = async (
    request: FastifyRequest,
    reply: FastifyReply,
    uploaded: UploadedFile<unknown>,
  ): Promise<boolean> => {
    const discard = () =>
      uploads.discard(uploaded.staged).catch((err: unknown) => {
        request.log.error({ err, storage_key: uploaded.staged.storageKey }, 'could not discard a staged upload');
      });
    let stored: Awaited<ReturnType<typeof claimIdempotencyKey>>;
    try {
      stored = await claimIdempotencyKey(idempotency, request, uploaded.fingerprint);
    } catch (error) {
      await discard();
      throw error;
    }
    if (!stored) return false;
    await discard();
    sendReplay(reply, stored);
    return true;
  };

  app.post(
    '/documents',
    {
      config: { permission: 'write', idempotent: 'form', multipartBody: UploadForm },
      schema: {
        tags: ['documents'],
        operationId: 'uploadDocument',
        summary: 'Upload a document',
        description:
          'multipart/form-data with the file in `file` (up to 52428800 bytes) and optional `metadata` (a JSON object as a string), `source` (default `upload`), `source_item` (the item within the source, e.g. a relative path) and `change_reason`. The file is stored and queued for ingestion; poll the document until `status` is `completed`. While the workspace’s ingestion backlog is full the upload is refused with 429 (503 when the whole service’s is) and `Retry-After`: send it again then.',
        consumes: ['multipart/form-data'],
        response: { 201: UploadResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 413, 422, 507) },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(request);
      const ticket = await admitIngestion(ctx.workspaceId, reply);
      takeUploadSlot(request, ctx.keyId, reply);
      const uploaded = await withUploadedFile(
        request,
        uploads,
        { workspaceId: ctx.workspaceId },
        ['metadata', 'source', 'source_item', 'change_reason'],
        (fields) => {
          const errors: FieldError[] = [];
          const sent = stringField(fields, 'source') ?? '';
          const source = sent.trim() || 'upload';
          // The limit applies to what was sent, as the OpenAPI document says (not to the trimmed value).
          if ([...sent].length > SOURCE_MAX) {
            errors.push({ field: 'source', message: `must be at most ${SOURCE_MAX} characters` });
          }
          const unsafe = displayTextProblem(source);
          if (unsafe !== undefined) errors.push({ field: 'source', message: unsafe });
          const sourceItem = stringField(fields, 'source_item');
          errors.push(...sourceItemProblems(sourceItem));
          let input: MetadataInput | undefined;
          try {
            input = readMetadataInput({ metadata: fields.get('metadata'), changeReason: fields.get('change_reason') });
          } catch (error) {
            if (!(error instanceof KbError && error.errors)) throw error;
            errors.push(...error.errors);
          }
          if (errors.length > 0 || !input) {
            throw new KbError('validation-error', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
          }
          return { source, ...(sourceItem !== undefined ? { sourceItem } : {}), ...input };
        },
      );
      if (await replayedUpload(request, reply, uploaded)) return reply;
      const { staged, fields } = uploaded;
      const { source, sourceItem, metadata, changeReason } = fields;
      const view = await documentWrites.create(
        ctx,
        {
          staged,
          metadata: metadata ?? {},
          source,
          ...(sourceItem !== undefined ? { sourceItem } : {}),
          changeReason,
        },
        writeKeyOf(request),
      );
      ticket.accepted();
      return reply.code(201).send(view);
    },
  );

  app.get(
    '/documents',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['documents'],
        operationId: 'listDocuments',
        summary: 'List documents',
        description:
          'Newest first (`created_at` desc, then id). Cursor paging by default (`limit`, `cursor`); offset paging when `page` or `page_size` is given. `cursor` cannot be combined with `page`/`page_size`, nor `limit` with offset paging.',
        querystring: ListQuerySchema,
        response: {
          200: DocumentListResponse,
          ...problemResponses(400, ...AUTHENTICATED_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const offsetMode = q.page !== undefined || q.page_size !== undefined;
      if (offsetMode && q.cursor !== undefined) {
        throw new KbError(
          'bad-request',
          '`cursor` (cursor paging) cannot be combined with `page`/`page_size` (offset paging).',
        );
      }
      if (offsetMode && q.limit !== undefined) {
        throw new KbError(
          'bad-request',
          '`limit` (cursor paging) cannot be combined with `page`/`page_size` (offset paging); use `page_size`.',
        );
      }
      const ctx = requestContext(request);
      // Read before the list, so a write landing meanwhile retires what is stored under it.
      const mark = documents.listChangeMark();
      const questionMark = request.url.indexOf('?');
      const queryString = questionMark === -1 ? '' : request.url.slice(questionMark + 1);
      // A scoped token's page is its own: never served from nor stored in the workspace's cache.
      const cached = ctx.scope ? undefined : listPages.get(ctx.workspaceId, queryString, mark);
      if (cached !== undefined) return sendJsonText(reply, cached);
      const query: ListDocumentsQuery = {
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.source !== undefined ? { source: q.source } : {}),
        ...(q.created_after !== undefined ? { createdAfter: q.created_after } : {}),
        ...(q.created_before !== undefined ? { createdBefore: q.created_before } : {}),
        ...(offsetMode
          ? { page: q.page ?? 1, pageSize: q.page_size ?? 20 }
          : { limit: q.limit ?? 20, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) }),
      };
      const result = await documents.list(ctx, query);
      const body =
        result.mode === 'offset'
          ? { documents: result.documents, total: result.total, page: result.page, page_size: result.page_size }
          : { documents: result.documents, pagination: result.pagination };
      const serialised = reply.serialize(body);
      const text = typeof serialised === 'string' ? serialised : JSON.stringify(body);
      if (!ctx.scope) listPages.set(ctx.workspaceId, queryString, mark, text);
      return sendJsonText(reply, text);
    },
  );

  app.get(
    '/documents/:id',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['documents'],
        operationId: 'getDocument',
        summary: 'Get a document',
        params: DocumentIdParams,
        response: { 200: Document, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => documents.get(requestContext(request), documentIdOf(request.params.id)),
  );

  app.put(
    '/documents/:id',
    {
      config: { permission: 'write', idempotent: 'form', multipartBody: ReplaceForm },
      schema: {
        tags: ['documents'],
        operationId: 'replaceDocumentContent',
        summary: 'Replace the content (new version)',
        description:
          'multipart/form-data like the upload: the new file in `file`, optional `metadata` (replaces the metadata; omitted keeps it) and `change_reason` (a form field or a key of `metadata`). Creates version M+1, which is ingested again. Refused with 429 or 503 and `Retry-After` while the ingestion backlog is full, as the upload is.',
        consumes: ['multipart/form-data'],
        params: DocumentIdParams,
        response: { 200: Document, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 413, 422, 507) },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(request);
      const documentId = documentIdOf(request.params.id);
      takeUploadSlot(request, ctx.keyId, reply);
      // Fail fast on an unknown document before streaming a file that would be thrown away.
      await documents.get(ctx, documentId);
      const ticket = await admitIngestion(ctx.workspaceId, reply);
      const uploaded = await withUploadedFile(
        request,
        uploads,
        { workspaceId: ctx.workspaceId, documentId },
        ['metadata', 'change_reason'],
        (fields) => readMetadataInput({ metadata: fields.get('metadata'), changeReason: fields.get('change_reason') }),
      );
      if (await replayedUpload(request, reply, uploaded)) return reply;
      const { staged, fields } = uploaded;
      const { metadata, changeReason } = fields;
      const view = await documentWrites.replaceContent(
        ctx,
        documentId,
        { staged, ...(metadata !== undefined ? { metadata } : {}), changeReason },
        writeKeyOf(request),
      );
      ticket.accepted();
      return view;
    },
  );

  app.patch(
    '/documents/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['documents'],
        operationId: 'updateDocumentMetadata',
        summary: 'Change the metadata (new version)',
        description:
          'Creates version M+1 with the same content and the given metadata, without re-embedding. `change_reason` may be a member of the body or a key of `metadata`.',
        params: DocumentIdParams,
        body: PatchBody,
        response: { 200: Document, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 409, 422, 507) },
      },
    },
    async (request) => {
      const documentId = documentIdOf(request.params.id);
      const { metadata, changeReason } = readMetadataInput({
        metadata: request.body.metadata,
        changeReason: request.body.change_reason,
      });
      const ctx = requestContext(request);
      const view = await documentWrites.patchMetadata(
        ctx,
        documentId,
        { metadata: metadata ?? {}, changeReason },
        writeKeyOf(request),
      );
      // Not refused for the backlog, but counted in it when its version must be ingested.
      if (view.status === 'pending') backlog.noteQueued(ctx.workspaceId);
      return view;
    },
  );

  app.delete(
    '/documents/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['documents'],
        operationId: 'deleteDocument',
        summary: 'Delete a document',
        description:
          'The document leaves list, get and current search at once; its versions stay for point-in-time search within retention. `purge=true` removes every version, file, chunk and vector now.',
        params: DocumentIdParams,
        querystring: DeleteQuery,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404),
        },
      },
    },
    async (request, reply) => {
      const documentId = documentIdOf(request.params.id);
      await documentWrites.remove(
        requestContext(request),
        documentId,
        { purge: request.query.purge === true },
        writeKeyOf(request),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/documents/:id/reprocess',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['documents'],
        operationId: 'reprocessDocument',
        summary: 'Re-run ingestion of the latest version',
        description:
          'Queues the latest version for ingestion again. Refused with 429 or 503 and `Retry-After` while the ingestion backlog is full, as the upload is.',
        params: DocumentIdParams,
        response: { 202: Document, ...problemResponses(...AUTHENTICATED_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(request);
      const documentId = documentIdOf(request.params.id);
      const ticket = await admitIngestion(ctx.workspaceId, reply);
      const view = await documentWrites.reprocess(ctx, documentId);
      ticket.accepted();
      return reply.code(202).send(view);
    },
  );
};

export default documentsRoutes;
