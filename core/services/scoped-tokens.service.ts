/**
 * Scoped tokens: short-lived credentials an API key with `read` or `search` mints for an end user
 * (a help-centre widget, a customer portal), carrying rules every read and search of theirs is
 * narrowed to (see `access-rules.ts`).
 *
 * A token is a JWT (RFC 7519, HS256) signed with the deployment's token secret, as Meilisearch's
 * tenant tokens are: the service stores nothing per token, any API process checks one on its own,
 * and a client library can read (not forge) what it carries. It names its parent key (`sub`), and
 * is accepted only while that key is active, so revoking the key ends every token it minted.
 */
import { randomUUID } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';
import type { AccessScope } from '../model/access-scope.model.ts';
import { type ApiKeyRecord, PERMISSIONS, type Permission } from '../model/account-records.model.ts';
import type { SearchFilters } from '../model/search-filters.model.ts';

/** Permissions a token may carry: it never writes. */
export const TOKEN_PERMISSIONS = ['read', 'search'] as const satisfies readonly Permission[];

const ISSUER = 'kb';
const AUDIENCE = 'kb-scoped-token';
/** Three base64url parts: how a presented credential is told to be a token rather than a key (`ink_…`). */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export const looksLikeToken = (presented: string): boolean => JWT_SHAPE.test(presented);

export interface MintTokenInput {
  /** Lifetime in seconds, 1 … the configured bound. */
  readonly expiresInSeconds: number;
  /** Default: the parent key's `read` and `search`. */
  readonly permissions?: readonly Permission[];
  readonly filters?: SearchFilters;
  /** Source names; absent: any source. */
  readonly sources?: readonly string[];
}

export interface MintedToken {
  readonly token: string;
  readonly scope: AccessScope;
  readonly workspaceId: string;
}

/** A presented token that checked out: its workspace and scope (its parent key is still to be checked). */
export interface VerifiedToken {
  readonly workspaceId: string;
  readonly scope: AccessScope;
}

export interface ScopedTokensService {
  /** Mints a token under `parent`; `validation-error` for rules it cannot carry, `forbidden` for wider permissions. */
  mint(parent: ApiKeyRecord, input: MintTokenInput): Promise<MintedToken>;
  /** The token's workspace and scope, or null when it is malformed, tampered with, signed by another secret or expired. */
  verify(token: string): Promise<VerifiedToken | null>;
  readonly maxTtlSeconds: number;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** The filters a verified payload carries, re-checked field by field (nothing else is taken from it). */
function filtersFrom(raw: unknown): SearchFilters | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const f = raw as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of ['documentIds', 'mimeTypes'] as const) {
    if (f[name] === undefined) continue;
    if (!isStringList(f[name])) return null;
    out[name] = f[name];
  }
  for (const name of ['createdAfter', 'createdBefore'] as const) {
    if (f[name] === undefined) continue;
    if (typeof f[name] !== 'string' || Number.isNaN(Date.parse(f[name] as string))) return null;
    out[name] = f[name];
  }
  if (f.metadata !== undefined) {
    if (typeof f.metadata !== 'object' || f.metadata === null || Array.isArray(f.metadata)) return null;
    const metadata: Record<string, (string | number | boolean)[]> = {};
    for (const [key, values] of Object.entries(f.metadata)) {
      if (!Array.isArray(values) || !values.every(isScalar)) return null;
      metadata[key] = values;
    }
    out.metadata = metadata;
  }
  return out as SearchFilters;
}

/** Rejects rules that would read as "anything" (an empty list does not restrict in the filter language). */
function checkRules(filters: SearchFilters, sources: readonly string[] | undefined): void {
  const empty: string[] = [];
  if (filters.documentIds?.length === 0) empty.push('filters.document_ids');
  if (filters.mimeTypes?.length === 0) empty.push('filters.mime_types');
  for (const [key, values] of Object.entries(filters.metadata ?? {})) {
    if (values.length === 0) empty.push(`filters.metadata.${key}`);
  }
  if (sources?.length === 0) empty.push('sources');
  if (empty.length > 0) {
    throw new KbError('validation-error', `A token's rules cannot hold an empty list: ${empty.join(', ')}.`, {
      errors: empty.map((field) => ({ field, message: 'must hold at least one value' })),
    });
  }
  for (const name of ['createdAfter', 'createdBefore'] as const) {
    const value = filters[name];
    if (value !== undefined && Number.isNaN(Date.parse(value))) {
      throw new KbError('validation-error', `filters.${name} is not an ISO 8601 date-time.`);
    }
  }
}

/**
 * `secret`: the deployment's signing key (32 bytes), or null when none is set up (minting and
 * checking then fail with `tokens-unavailable` and null).
 */
export function createScopedTokensService(deps: {
  readonly secret: Uint8Array | null;
  readonly maxTtlSeconds: number;
}): ScopedTokensService {
  const { secret, maxTtlSeconds } = deps;
  return {
    maxTtlSeconds,

    async mint(parent, input) {
      if (!secret) {
        throw new KbError(
          'tokens-unavailable',
          'Scoped tokens need a signing key: set KB_TOKEN_SECRET (the same on every API process).',
        );
      }
      const ttl = input.expiresInSeconds;
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > maxTtlSeconds) {
        throw new KbError('validation-error', `expires_in must be 1–${maxTtlSeconds} seconds (KB_TOKEN_MAX_TTL_S).`, {
          errors: [{ field: '/expires_in', message: `must be 1–${maxTtlSeconds}` }],
        });
      }
      const mintable = TOKEN_PERMISSIONS.filter((p) => parent.permissions.includes(p));
      const asked = input.permissions ?? mintable;
      const unknown = asked.filter((p) => !PERMISSIONS.includes(p));
      if (unknown.length > 0 || asked.length === 0) {
        throw new KbError(
          'validation-error',
          `permissions must be a non-empty subset of ${TOKEN_PERMISSIONS.join(', ')}.`,
        );
      }
      const wider = asked.filter((p) => !(mintable as readonly string[]).includes(p));
      if (wider.length > 0) {
        throw new KbError(
          'forbidden',
          `A token cannot carry ${wider.map((p) => `'${p}'`).join(', ')}: tokens only read and search, with permissions the minting key has (${mintable.join(', ') || 'none'}).`,
        );
      }
      const filters = input.filters ?? {};
      checkRules(filters, input.sources);
      const nowMs = Date.now();
      const now = Math.floor(nowMs / 1000);
      // Whole seconds (JWT times): rounded up, so a token lives at least the lifetime asked for.
      const exp = Math.ceil(nowMs / 1000 + ttl);
      const scope: AccessScope = {
        tokenId: randomUUID(),
        parentKeyId: parent.id,
        permissions: [...new Set(asked)].sort(),
        filters,
        sources: input.sources ? [...new Set(input.sources)] : null,
        expiresAt: new Date(exp * 1000).toISOString(),
      };
      // Loaded on first use: commands that open the runtime never mint or check a token.
      const { SignJWT } = await import('jose');
      const token = await new SignJWT({
        ws: parent.workspaceId,
        perms: scope.permissions,
        rules: { filters, sources: scope.sources },
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(parent.id)
        .setJti(scope.tokenId)
        .setIssuedAt(now)
        .setExpirationTime(exp)
        .sign(secret);
      return { token, scope, workspaceId: parent.workspaceId };
    },

    async verify(token) {
      if (!secret || !looksLikeToken(token)) return null;
      const { errors, jwtVerify } = await import('jose');
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, secret, {
          algorithms: ['HS256'],
          issuer: ISSUER,
          audience: AUDIENCE,
          requiredClaims: ['sub', 'exp', 'jti'],
        }));
      } catch (error) {
        if (error instanceof errors.JOSEError || error instanceof TypeError || error instanceof SyntaxError)
          return null;
        throw error;
      }
      const rules = payload.rules as { filters?: unknown; sources?: unknown } | undefined;
      const filters = filtersFrom(rules?.filters);
      const sources = rules?.sources ?? null;
      const perms = payload.perms;
      if (
        typeof payload.ws !== 'string' ||
        !filters ||
        (sources !== null && !isStringList(sources)) ||
        !isStringList(perms) ||
        !perms.every((p) => (TOKEN_PERMISSIONS as readonly string[]).includes(p))
      ) {
        return null;
      }
      return {
        workspaceId: payload.ws,
        scope: {
          tokenId: String(payload.jti),
          parentKeyId: String(payload.sub),
          permissions: perms as Permission[],
          filters,
          sources,
          expiresAt: new Date((payload.exp as number) * 1000).toISOString(),
        },
      };
    },
  };
}
