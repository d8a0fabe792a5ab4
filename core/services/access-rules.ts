/**
 * The rules of a scoped token (`AccessScope`), in one place: whether a document version is
 * visible to it, and a request's search filters narrowed to it. Every document-level read goes
 * through `document-access.ts`, which asks {@link versionVisible}; search asks
 * {@link narrowFilters} before the store and {@link versionVisible} again for each hit.
 */
import type { AccessScope } from '../model/access-scope.model.ts';
import type { Metadata } from '../model/document-records.model.ts';
import type { SearchFilters } from '../model/search-filters.model.ts';

type FilterValue = string | number | boolean;

/** What the rules look at: the document (id, source, creation time) and the version (type, metadata). */
export interface VisibilityFacts {
  readonly documentId: string;
  /** Null when unknown (a deleted document's): a scope that names sources hides it. */
  readonly source: string | null;
  readonly documentCreatedAt: string;
  readonly mimeType: string;
  readonly metadata: Metadata;
}

const sameValue = (a: unknown, b: FilterValue): boolean =>
  typeof a === typeof b && (typeof b !== 'number' || Number.isFinite(b)) && a === b;

/** A metadata value matches a filter's values type-exactly; a list matches when one of its elements does. */
function metadataMatches(value: unknown, wanted: readonly FilterValue[]): boolean {
  if (Array.isArray(value)) return value.some((element) => wanted.some((w) => sameValue(element, w)));
  return wanted.some((w) => sameValue(value, w));
}

/**
 * Whether the facts match every filter, with the search filter language's meaning (as the stores
 * apply it): an empty list does not restrict, `createdAfter` is inclusive and `createdBefore`
 * exclusive on the document's creation time, metadata matches type-exactly.
 */
export function matchesFilters(filters: SearchFilters, facts: VisibilityFacts): boolean {
  if (filters.documentIds && filters.documentIds.length > 0 && !filters.documentIds.includes(facts.documentId)) {
    return false;
  }
  if (filters.mimeTypes && filters.mimeTypes.length > 0 && !filters.mimeTypes.includes(facts.mimeType)) return false;
  const created = Date.parse(facts.documentCreatedAt);
  if (filters.createdAfter !== undefined && !(created >= Date.parse(filters.createdAfter))) return false;
  if (filters.createdBefore !== undefined && !(created < Date.parse(filters.createdBefore))) return false;
  for (const [key, values] of Object.entries(filters.metadata ?? {})) {
    if (values.length === 0) continue;
    if (!Object.hasOwn(facts.metadata, key) || !metadataMatches(facts.metadata[key], values)) return false;
  }
  return true;
}

/** Whether a scope lets its bearer see a version (no scope: everything of the workspace). */
export function versionVisible(scope: AccessScope | undefined, facts: VisibilityFacts): boolean {
  if (!scope) return true;
  if (scope.sources !== null && (facts.source === null || !scope.sources.includes(facts.source))) return false;
  return matchesFilters(scope.filters, facts);
}

const valueKey = (value: FilterValue) => `${typeof value}:${String(value)}`;

/** The values both lists allow; a missing or empty list allows any. Null: none is left. */
function both<T>(
  a: readonly T[] | undefined,
  b: readonly T[] | undefined,
  key: (v: T) => string,
): T[] | null | undefined {
  const hasA = a !== undefined && a.length > 0;
  const hasB = b !== undefined && b.length > 0;
  if (!hasA) return hasB ? [...(b as T[])] : undefined;
  if (!hasB) return [...a];
  const inB = new Set(b.map(key));
  const left = a.filter((v) => inB.has(key(v)));
  return left.length > 0 ? left : null;
}

const later = (a: string | undefined, b: string | undefined) =>
  a === undefined ? b : b === undefined ? a : Date.parse(a) >= Date.parse(b) ? a : b;
const earlier = (a: string | undefined, b: string | undefined) =>
  a === undefined ? b : b === undefined ? a : Date.parse(a) <= Date.parse(b) ? a : b;

/**
 * A request's filters narrowed to the scope's: what matches both (a request can only narrow the
 * scope, never widen it). Null when nothing can match both, so the caller answers no results
 * instead of handing the store an empty list (which the filter language reads as "any").
 */
export function narrowFilters(scope: SearchFilters, request: SearchFilters): SearchFilters | null {
  const documentIds = both(scope.documentIds, request.documentIds, String);
  const mimeTypes = both(scope.mimeTypes, request.mimeTypes, String);
  if (documentIds === null || mimeTypes === null) return null;
  const createdAfter = later(scope.createdAfter, request.createdAfter);
  const createdBefore = earlier(scope.createdBefore, request.createdBefore);
  if (
    createdAfter !== undefined &&
    createdBefore !== undefined &&
    Date.parse(createdAfter) >= Date.parse(createdBefore)
  ) {
    return null;
  }
  const metadata: Record<string, FilterValue[]> = {};
  const keys = new Set([...Object.keys(scope.metadata ?? {}), ...Object.keys(request.metadata ?? {})]);
  for (const key of keys) {
    const values = both(scope.metadata?.[key], request.metadata?.[key], valueKey);
    if (values === null) return null;
    if (values !== undefined) metadata[key] = values;
  }
  return {
    ...(documentIds ? { documentIds } : {}),
    ...(mimeTypes ? { mimeTypes } : {}),
    ...(createdAfter !== undefined ? { createdAfter } : {}),
    ...(createdBefore !== undefined ? { createdBefore } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}
