import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum } from './common.schema.ts';
import { SearchFiltersSchema } from './search.schema.ts';

const TokenPermission = StringEnum(['read', 'search'] as const);

const Sources = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  minItems: 1,
  maxItems: 100,
  description: 'Names of the sources a visible document must come from (its `source`); absent: any source.',
});

export const TokenRequest = Type.Object(
  {
    expires_in: Type.Integer({
      minimum: 1,
      description: "Lifetime in seconds (required), at most the operator's bound `KB_TOKEN_MAX_TTL_S` (default 86400).",
    }),
    permissions: Type.Optional(
      Type.Array(TokenPermission, {
        minItems: 1,
        maxItems: 2,
        uniqueItems: true,
        description: "What the token may do: `read`, `search`, or both (default: those of the key's). Never `write`.",
      }),
    ),
    filters: Type.Optional(SearchFiltersSchema),
    sources: Type.Optional(Sources),
  },
  {
    title: 'TokenRequest',
    additionalProperties: false,
    examples: [{ expires_in: 3600, permissions: ['search'], filters: { metadata: { customer: 'acme' } } }],
  },
);

export const TokenResponse = Type.Object(
  {
    token: Type.String({ description: 'Send it as `Authorization: Bearer <token>` (or `X-API-Key`).' }),
    token_type: Type.Literal('Bearer'),
    expires_at: DateTime(),
    workspace_id: Type.String(),
    parent_key_id: Type.String({ description: 'The key that minted the token: revoking it ends the token.' }),
    permissions: Type.Array(TokenPermission),
    filters: SearchFiltersSchema,
    sources: Nullable(Sources),
  },
  { title: 'ScopedToken' },
);
