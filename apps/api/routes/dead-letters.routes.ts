/**
 * Dead letters of the pipeline stages, for the people who run the service: list them and replay
 * them once their cause is fixed. An owner's dashboard session or an API key with `write`
 * permission; either sees and replays only its own workspace's dead letters (`kb dlq` on the
 * service's machine sees every workspace).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import {
  DeadLetterList,
  DeadLetterReplayResult,
  DeadLettersQuery,
  ReplayDeadLettersBody,
} from '../schemas/dead-letters.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** The caller's workspace; a dashboard session must be an owner's. */
function adminWorkspace(request: FastifyRequest): { workspaceId: string; actor: string } {
  const ctx = requestContext(request);
  if (request.account && request.account.user.role !== 'owner') {
    throw new KbError('forbidden', 'Only an owner of the workspace can list or replay dead letters.');
  }
  return {
    workspaceId: ctx.workspaceId,
    actor: ctx.actorType === 'user' ? `account:${ctx.keyId}` : `key:${ctx.keyId}`,
  };
}

const deadLettersRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const tags = ['admin'];

  app.get(
    '/admin/dead-letters',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        operationId: 'listDeadLetters',
        summary: 'List dead letters',
        description:
          "Events of the workspace's documents that a pipeline stage gave up on (a file that can never be parsed, an event that cannot be handled), read from the stages' dead-letter topics, with whether each was replayed. An owner's dashboard session or a key with `write` permission.",
        querystring: DeadLettersQuery,
        response: { 200: DeadLetterList, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 503) },
      },
    },
    async (request) => {
      const { workspaceId } = adminWorkspace(request);
      return services.deadLetters.list({
        workspaceId,
        ...(request.query.stage ? { stage: request.query.stage } : {}),
        state: request.query.state ?? 'all',
      });
    },
  );

  app.post(
    '/admin/dead-letters/replay',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'replayDeadLetters',
        summary: 'Replay dead letters',
        description:
          "Re-drives every dead letter of the workspace not replayed yet (of one stage with `stage`), once its cause is fixed: a failed version goes back to `processing` and the event back to its stage's input topic. Each dead letter is replayed once: a second replay finds nothing pending. A dead letter whose version completed meanwhile or is gone is recorded as `skipped`.",
        body: ReplayDeadLettersBody,
        response: { 200: DeadLetterReplayResult, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 422, 503) },
      },
    },
    async (request) => {
      const { workspaceId, actor } = adminWorkspace(request);
      return services.deadLetters.replay(
        { workspaceId, ...(request.body.stage ? { stage: request.body.stage } : {}) },
        actor,
      );
    },
  );
};

export default deadLettersRoutes;
