import { KbError } from '../errors/kb-error.ts';
import { checkOutboundTarget, type OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { SourceKind, SourceLocation } from '../ports/source-store/source-store.port.ts';
import { type FolderRoot, resolveFolderPath, rootsOf } from './folder-roots.ts';
import type { SecretBox } from './secret-box.ts';

/** Where a client says a source's items are (the members of a POST or PATCH body). */
export interface LocationInput {
  readonly path?: string | undefined;
  readonly urls?: readonly string[] | undefined;
  readonly sitemap?: string | undefined;
  readonly endpoint?: string | undefined;
  readonly bucket?: string | undefined;
  readonly prefix?: string | undefined;
  readonly region?: string | undefined;
  readonly access_key?: string | undefined;
  readonly secret_key?: string | undefined;
}

const MEMBERS: Record<SourceKind, readonly (keyof LocationInput)[]> = {
  folder: ['path'],
  web: ['urls', 'sitemap'],
  s3: ['endpoint', 'bucket', 'prefix', 'region', 'access_key', 'secret_key'],
};
const ALL_MEMBERS = [...new Set(Object.values(MEMBERS).flat())];

const invalid = (field: string, message: string) =>
  new KbError('validation-error', `${field} ${message}.`, { errors: [{ field, message }] });

/** Refusal of an outbound target, naming the field it came from. */
async function checkTarget(field: string, url: string, policy: OutboundPolicy): Promise<void> {
  try {
    await checkOutboundTarget(url, policy);
  } catch (error) {
    if (error instanceof KbError) {
      throw new KbError(error.code, `${field}: ${error.message}`, { errors: [{ field, message: error.message }] });
    }
    throw error;
  }
}

/**
 * Checks and canonicalises the location of a source of kind `kind` in workspace `workspaceId`: a
 * folder's path must lie under the roots the operator grants that workspace (`path-refused`, one
 * answer for every path outside them, see `resolveFolderPath`); web pages, sitemaps and S3 endpoints must be
 * http(s) targets the outbound policy allows (`outbound-refused`, 422); S3 credentials are sealed
 * with the operator's key (refused when there is none). A member of another kind is a
 * `validation-error`. `previous` is the stored location a PATCH changes.
 */
export function createLocationChecker(deps: {
  readonly folderRoots: readonly FolderRoot[];
  readonly outbound: OutboundPolicy;
  readonly secrets: SecretBox | null;
}) {
  return async function checkLocation(
    workspaceId: string,
    kind: SourceKind,
    input: LocationInput,
    previous?: SourceLocation,
  ): Promise<SourceLocation> {
    const foreign = ALL_MEMBERS.filter((member) => input[member] !== undefined && !MEMBERS[kind].includes(member));
    if (foreign.length > 0) throw invalid(foreign[0] as string, `is not a member of a ${kind} source`);
    switch (kind) {
      case 'folder': {
        const path = input.path ?? previous?.path;
        if (path === undefined) throw invalid('path', 'is required for a folder source');
        return { path: await resolveFolderPath(path, rootsOf(deps.folderRoots, workspaceId)) };
      }
      case 'web': {
        const urls = input.urls ?? (input.sitemap === undefined ? previous?.urls : undefined);
        const sitemap = input.sitemap ?? (input.urls === undefined ? previous?.sitemap : undefined);
        if ((urls === undefined) === (sitemap === undefined)) {
          throw invalid('urls', 'or sitemap is required for a web source (one of them, not both)');
        }
        if (urls !== undefined) {
          if (urls.length === 0) throw invalid('urls', 'must list at least one URL');
          for (const [i, url] of urls.entries()) await checkTarget(`urls/${i}`, url, deps.outbound);
          return { urls: [...new Set(urls)] };
        }
        await checkTarget('sitemap', sitemap as string, deps.outbound);
        return { sitemap: sitemap as string };
      }
      case 's3': {
        const endpoint = input.endpoint ?? previous?.endpoint;
        const bucket = input.bucket ?? previous?.bucket;
        if (endpoint === undefined) throw invalid('endpoint', 'is required for an s3 source');
        if (bucket === undefined) throw invalid('bucket', 'is required for an s3 source');
        await checkTarget('endpoint', endpoint, deps.outbound);
        if ((input.access_key === undefined) !== (input.secret_key === undefined)) {
          throw invalid('secret_key', 'and access_key go together');
        }
        let secret = previous?.secret;
        if (input.access_key !== undefined && input.secret_key !== undefined) {
          if (!deps.secrets) {
            throw invalid(
              'access_key',
              'cannot be stored: the operator has set no KB_SOURCE_SECRET_KEY to encrypt credentials with',
            );
          }
          secret = deps.secrets.seal(JSON.stringify({ accessKey: input.access_key, secretKey: input.secret_key }));
        }
        const prefix = input.prefix ?? previous?.prefix ?? '';
        const region = input.region ?? previous?.region;
        return {
          endpoint: endpoint.replace(/\/+$/, ''),
          bucket,
          prefix,
          ...(region ? { region } : {}),
          ...(secret ? { secret } : {}),
        };
      }
    }
  };
}

export type LocationChecker = ReturnType<typeof createLocationChecker>;
