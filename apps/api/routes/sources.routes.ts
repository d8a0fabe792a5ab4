import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { readSourceMetadata } from '../lib/metadata-input.ts';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import {
  CreateSourceBody,
  DeleteSourceQuery,
  PatchSourceBody,
  Run,
  RunList,
  RunParams,
  RunsQuery,
  Source,
  SourceIdParams,
  SourceList,
  SyncQuery,
  SyncStarted,
} from '../schemas/sources.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** Sources of synchronisation: `write` to change and sync, `read` to look. */
const sourcesRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const { sources } = services;

  app.post(
    '/sources',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['sources'],
        operationId: 'createSource',
        summary: 'Create a source of synchronisation',
        description:
          'A folder on the server, web pages or an S3 bucket kept in sync with the knowledge base: every change at the source becomes a new version. 409 when the name is taken; 422 for a folder outside the allowed roots or a web or S3 target the outbound policy refuses (loopback, private, link-local).',
        body: CreateSourceBody,
        response: { 201: Source, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 409, 422) },
      },
    },
    async (request, reply) => {
      const { name, kind, include, exclude, metadata, schedule, ...location } = request.body;
      const b = { include, exclude, metadata, schedule };
      const view = await sources.create(requestContext(request), {
        name,
        kind,
        ...location,
        ...(b.include !== undefined ? { include: b.include } : {}),
        ...(b.exclude !== undefined ? { exclude: b.exclude } : {}),
        ...(b.metadata !== undefined ? { metadata: readSourceMetadata(b.metadata) } : {}),
        ...(b.schedule !== undefined ? { schedule: b.schedule } : {}),
      });
      return reply.code(201).send(view);
    },
  );

  app.get(
    '/sources',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['sources'],
        operationId: 'listSources',
        summary: 'Sources of the workspace, by name',
        response: { 200: SourceList, ...problemResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => sources.list(requestContext(request)),
  );

  app.get(
    '/sources/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['sources'],
        operationId: 'getSource',
        summary: 'One source with its last run',
        params: SourceIdParams,
        response: { 200: Source, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => sources.get(requestContext(request), request.params.id),
  );

  app.patch(
    '/sources/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['sources'],
        operationId: 'updateSource',
        summary: 'Change a source',
        description:
          'The name and kind stay. New patterns, metadata and location apply from the next run; new S3 credentials replace the stored ones.',
        params: SourceIdParams,
        body: PatchSourceBody,
        response: { 200: Source, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 422) },
      },
    },
    async (request) => {
      const { include, exclude, metadata, schedule, ...location } = request.body;
      const b = { include, exclude, metadata, schedule };
      return sources.update(requestContext(request), request.params.id, {
        ...location,
        ...(b.include !== undefined ? { include: b.include } : {}),
        ...(b.exclude !== undefined ? { exclude: b.exclude } : {}),
        ...(b.metadata !== undefined ? { metadata: readSourceMetadata(b.metadata) } : {}),
        ...(b.schedule !== undefined ? { schedule: b.schedule } : {}),
      });
    },
  );

  app.delete(
    '/sources/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['sources'],
        operationId: 'deleteSource',
        summary: 'Remove a source',
        description:
          'Its documents stay unless `delete_documents=true` (then they are deleted, not purged). 409 while a run is going.',
        params: SourceIdParams,
        querystring: DeleteSourceQuery,
        response: {
          204: Type.Null({ description: 'Removed.' }),
          ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 409),
        },
      },
    },
    async (request, reply) => {
      await sources.remove(requestContext(request), request.params.id, {
        deleteDocuments: request.query.delete_documents === true,
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/sources/:id/sync',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['sources'],
        operationId: 'syncSource',
        summary: 'Start a sync run now',
        description:
          'Answers at once; follow the run at `/sources/{id}/runs/{run_id}`. One run per source at a time: while one is going, 409 naming it.',
        params: SourceIdParams,
        querystring: SyncQuery,
        response: { 202: SyncStarted, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const started = await sources.sync(requestContext(request), request.params.id, {
        allowMassDelete: request.query.allow_mass_delete === true,
      });
      return reply.code(202).send(started);
    },
  );

  app.get(
    '/sources/:id/runs',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['sources'],
        operationId: 'listSourceRuns',
        summary: 'Runs of a source, newest first',
        params: SourceIdParams,
        querystring: RunsQuery,
        response: { 200: RunList, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => sources.runs(requestContext(request), request.params.id, request.query.limit ?? 20),
  );

  app.get(
    '/sources/:id/runs/:run_id',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['sources'],
        operationId: 'getSourceRun',
        summary: 'One run with its counts and errors',
        params: RunParams,
        response: { 200: Run, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => sources.run(requestContext(request), request.params.id, request.params.run_id),
  );
};

export default sourcesRoutes;
