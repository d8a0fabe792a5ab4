import { KbError } from '../errors/kb-error.ts';
import type { SourceKind, SourceLocation } from '../ports/source-store/source-store.port.ts';
import { resolveFolderPath } from './folder-roots.ts';

/** Where a client says a source's items are (the members of a POST or PATCH body). */
export interface LocationInput {
  readonly path?: string | undefined;
  readonly urls?: readonly string[] | undefined;
  readonly sitemap?: string | undefined;
}

const invalid = (field: string, message: string) =>
  new KbError('validation-error', `${field} ${message}.`, { errors: [{ field, message }] });

/** Members that belong to another kind than `kind`. */
function foreignMembers(kind: SourceKind, input: LocationInput): string[] {
  const own: Record<SourceKind, readonly string[]> = { folder: ['path'], web: ['urls', 'sitemap'], s3: [] };
  return (['path', 'urls', 'sitemap'] as const).filter(
    (member) => input[member] !== undefined && !own[kind].includes(member),
  );
}

/**
 * Checks and canonicalises the location of a source of kind `kind`: a folder's path must lie
 * under the operator's roots (`path-refused` otherwise). A member of another kind is a
 * `validation-error`.
 */
export function createLocationChecker(deps: { readonly folderRoots: readonly string[] }) {
  return async function checkLocation(kind: SourceKind, input: LocationInput): Promise<SourceLocation> {
    const foreign = foreignMembers(kind, input);
    if (foreign.length > 0) throw invalid(foreign[0] as string, `is not a member of a ${kind} source`);
    switch (kind) {
      case 'folder': {
        if (input.path === undefined) throw invalid('path', 'is required for a folder source');
        return { path: await resolveFolderPath(input.path, deps.folderRoots) };
      }
      default:
        throw invalid('kind', `must be one of: folder`);
    }
  };
}

export type LocationChecker = ReturnType<typeof createLocationChecker>;
