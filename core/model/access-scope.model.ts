import type { Permission } from './account-records.model.ts';
import type { SearchFilters } from './search-filters.model.ts';

/**
 * What a scoped token lets its bearer see: the rules every document-level read and every search
 * of the request is narrowed to, the permissions it carries (read and search only, never wider
 * than its parent key's) and the key it was minted from.
 */
export interface AccessScope {
  /** Id of the token (its `jti`), for logs. */
  readonly tokenId: string;
  /** Id of the API key that minted the token: the key the request counts against and is logged under. */
  readonly parentKeyId: string;
  readonly permissions: readonly Permission[];
  /** Filters in the search filter language; a document version is visible only when it matches all of them. */
  readonly filters: SearchFilters;
  /** Source names a visible document must come from; null: any source. */
  readonly sources: readonly string[] | null;
  /** ISO 8601 instant the token stops working. */
  readonly expiresAt: string;
}
