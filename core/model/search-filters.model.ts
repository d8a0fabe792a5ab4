/** What a search narrows its hits to; a hit matches every filter given. */
export interface SearchFilters {
  readonly documentIds?: readonly string[];
  /** Version metadata `key` equals the value, or one of the values. */
  readonly metadata?: Readonly<Record<string, readonly (string | number | boolean)[]>>;
  readonly mimeTypes?: readonly string[];
  readonly createdAfter?: string;
  readonly createdBefore?: string;
}
