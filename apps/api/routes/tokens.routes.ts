import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import { TokenRequest, TokenResponse } from '../schemas/tokens.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';
import { fromSearchFilters, toSearchFilters } from './search.routes.ts';

const tokensRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  app.post(
    '/tokens',
    {
      config: { permission: ['read', 'search'] },
      schema: {
        tags: ['tokens'],
        operationId: 'createToken',
        summary: 'Mint a scoped token for an end user',
        description:
          "A short-lived token (a signed JWT) to hand to an end user's client, such as a help-centre widget: it reads and searches only the documents its rules let through. " +
          '`filters` take the search filter language (metadata, `document_ids`, `mime_types`, creation dates) and `sources` source names; a document version is visible when it matches all of them. ' +
          "Every search of the token is narrowed to its rules (a request's own filters can only narrow them further); every document, version, chunk, context, diff and event outside them answers 404 or is left out, as for another workspace's. " +
          "Its permissions are `read` and/or `search`, never more than the key's; it never writes and cannot mint tokens. " +
          "It counts against the minting key's rate limit, is logged under that key, and stops working at `expires_at` or when the key is revoked. " +
          'Needs a key with `read` or `search`.',
        body: TokenRequest,
        response: { 201: TokenResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 409, 422) },
      },
    },
    async (request, reply) => {
      const key = request.apiKey;
      if (!key || request.scope) {
        throw new KbError(
          'forbidden',
          'Scoped tokens are minted with an API key (not a token or a dashboard session).',
        );
      }
      const body = request.body;
      const minted = await services.tokens.mint(key, {
        expiresInSeconds: body.expires_in,
        ...(body.permissions !== undefined ? { permissions: body.permissions } : {}),
        ...(body.filters !== undefined ? { filters: toSearchFilters(body.filters) } : {}),
        ...(body.sources !== undefined ? { sources: body.sources } : {}),
      });
      return reply.code(201).send({
        token: minted.token,
        token_type: 'Bearer' as const,
        expires_at: minted.scope.expiresAt,
        workspace_id: minted.workspaceId,
        parent_key_id: minted.scope.parentKeyId,
        permissions: [...minted.scope.permissions] as ('read' | 'search')[],
        filters: fromSearchFilters(minted.scope.filters),
        sources: minted.scope.sources ? [...minted.scope.sources] : null,
      });
    },
  );
};

export default tokensRoutes;
