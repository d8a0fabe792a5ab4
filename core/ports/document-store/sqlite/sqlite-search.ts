import type { SearchFilters } from '../../../model/search-filters.model.ts';
import { canonicalTime } from '../stored-records.ts';

/** A piece of SQL with its positional parameters. */
export interface SqlPart {
  readonly sql: string;
  readonly params: unknown[];
}

/** Most distinct query words sent to FTS5; a 2000-character query stays well below it. */
const MAX_QUERY_TERMS = 512;

/**
 * The distinct words of free text (letters, digits and combining marks; the first spelling of
 * each, case aside), at most {@link MAX_QUERY_TERMS}: what keyword search looks for.
 */
export function queryWords(text: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = match[0];
    const key = word.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    words.push(word);
    if (words.length >= MAX_QUERY_TERMS) break;
  }
  return words;
}

/**
 * Turns free text into a safe FTS5 query: the words of the text ({@link queryWords}), each as a
 * quoted string, joined with OR, so no character of the user's text is read as FTS5 syntax.
 * Returns null when the text has no words (the search then has no hits).
 */
export function ftsQuery(text: string): string | null {
  const terms = queryWords(text).map((word) => `"${word.replaceAll('"', '""')}"`);
  return terms.length === 0 ? null : terms.join(' OR ');
}

/**
 * Restricts `versions v` / `documents d` to the versions served at `asOf` (null: now).
 * A version is served from `served_from` (inclusive) to `served_until` (exclusive); deletion sets
 * `served_until`, and archived versions have no chunks left, so both drop out on their own.
 */
export function servedAt(asOf: string | null): SqlPart {
  if (asOf === null) {
    return {
      sql: 'v.served_from IS NOT NULL AND v.served_until IS NULL AND d.deleted_at IS NULL',
      params: [],
    };
  }
  const at = canonicalTime(asOf, 'asOf');
  return {
    sql: 'v.served_from IS NOT NULL AND v.served_from <= ? AND (v.served_until IS NULL OR v.served_until > ?)',
    params: [at, at],
  };
}

/**
 * A match of one JSON element (`type`/`value` columns of `json_each`) against filter values,
 * type-exact: strings match text, numbers match integers and reals, booleans match true/false.
 */
function jsonValueMatch(alias: string, values: readonly (string | number | boolean)[]): SqlPart {
  const strings = values.filter((value): value is string => typeof value === 'string');
  const numbers = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
  const options: string[] = [];
  const params: unknown[] = [];
  if (strings.length > 0) {
    options.push(`(${alias}.type = 'text' AND ${alias}.value IN (SELECT value FROM json_each(?)))`);
    params.push(JSON.stringify(strings));
  }
  if (numbers.length > 0) {
    options.push(`(${alias}.type IN ('integer', 'real') AND ${alias}.value IN (SELECT value FROM json_each(?)))`);
    params.push(JSON.stringify(numbers));
  }
  if (values.includes(true)) options.push(`${alias}.type = 'true'`);
  if (values.includes(false)) options.push(`${alias}.type = 'false'`);
  return { sql: options.length === 0 ? '0' : `(${options.join(' OR ')})`, params };
}

/**
 * Metadata filter on `versions v`: the version's metadata has `key` equal to one of `values`;
 * a metadata value that is a list matches when one of its elements does. The key is compared as
 * a bound value (`json_each` over the metadata object), never spliced into a JSON path.
 */
function metadataMatch(key: string, values: readonly (string | number | boolean)[]): SqlPart {
  const scalar = jsonValueMatch('mk', values);
  const element = jsonValueMatch('me', values);
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(v.metadata) mk WHERE mk.key = ? AND (
      ${scalar.sql}
      OR (mk.type = 'array' AND EXISTS (SELECT 1 FROM json_each(mk.value) me WHERE ${element.sql}))))`,
    params: [key, ...scalar.params, ...element.params],
  };
}

/**
 * The workspace and filter conditions of a search over `chunks c JOIN versions v JOIN documents d`.
 * An empty list in a filter (`documentIds: []`, `mimeTypes: []`, a metadata key with no values)
 * does not restrict. `createdAfter` is inclusive and `createdBefore` exclusive, on the document's
 * `created_at`.
 */
export function searchConditions(workspaceId: string, filters: SearchFilters): SqlPart {
  const version = versionConditions(workspaceId, filters);
  return { sql: `c.workspace_id = ? AND ${version.sql}`, params: [workspaceId, ...version.params] };
}

/**
 * {@link searchConditions} over `versions v JOIN documents d` alone: every filter is a condition on
 * the version or its document, so the versions that pass decide which chunks can.
 */
export function versionConditions(workspaceId: string, filters: SearchFilters): SqlPart {
  const conditions = ['v.workspace_id = ?'];
  const params: unknown[] = [workspaceId];
  if (filters.documentIds && filters.documentIds.length > 0) {
    conditions.push('v.document_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(filters.documentIds));
  }
  if (filters.mimeTypes && filters.mimeTypes.length > 0) {
    conditions.push('v.mime_type IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(filters.mimeTypes));
  }
  if (filters.createdAfter !== undefined) {
    conditions.push('d.created_at >= ?');
    params.push(canonicalTime(filters.createdAfter, 'createdAfter'));
  }
  if (filters.createdBefore !== undefined) {
    conditions.push('d.created_at < ?');
    params.push(canonicalTime(filters.createdBefore, 'createdBefore'));
  }
  for (const [key, values] of Object.entries(filters.metadata ?? {})) {
    if (values.length === 0) continue;
    const match = metadataMatch(key, values);
    conditions.push(match.sql);
    params.push(...match.params);
  }
  return { sql: conditions.join(' AND '), params };
}
