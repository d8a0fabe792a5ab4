/**
 * The knowledge-base document service's TypeScript client. `api` is the generated part: every
 * operation of the service's OpenAPI document, typed from it (openapi-typescript types over
 * openapi-fetch). Around it, only what generation cannot give: a multipart upload with metadata,
 * waiting until a version is ingested, iterating over every page of a list, a fresh
 * `Idempotency-Key` on every write (so a write retried after a lost answer is applied once), and
 * retrying a request answered 429 or 503 after its `Retry-After`.
 */
import { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';
export type { components, operations, paths } from './schema.js';
type Schemas = components['schemas'];
export type Document = Schemas['Document'];
export type DocumentListItem = Schemas['DocumentListItem'];
export type UploadResult = Schemas['UploadResult'];
export type Version = Schemas['Version'];
export type VersionList = Schemas['VersionList'];
export type VersionComparison = Schemas['VersionComparison'];
export type RollbackResult = Schemas['RollbackResult'];
export type SearchRequest = Schemas['SearchRequest'];
export type SearchResponse = Schemas['SearchResponse'];
export type SearchResult = Schemas['SearchResult'];
export type ChunkList = Schemas['ChunkList'];
export type AuditEntry = Schemas['AuditEntry'];
export type Problem = Schemas['Problem'];
export type Metadata = Schemas['Metadata'];
export type DocumentLookupMatch = Schemas['DocumentLookupMatch'];
export type TokenRequest = Schemas['TokenRequest'];
export type ScopedToken = Schemas['ScopedToken'];
export interface KbClientOptions {
    /** The service's address, e.g. `http://127.0.0.1:8080`. */
    readonly baseUrl: string;
    /** An API key (`ink_…`) or a scoped token (from `createToken`), sent as `X-API-Key`. */
    readonly apiKey: string;
    /** Retries of a request answered 429 or 503, each after its `Retry-After` (default 5). */
    readonly maxRetries?: number;
    /**
     * Sends a fresh random `Idempotency-Key` with every write (POST, PUT, PATCH, DELETE, except the
     * reads sent as POST: search and lookup) that does not carry one already, and keeps it across
     * that request's retries (default true; false sends none unless the caller adds one).
     */
    readonly idempotencyKeys?: boolean;
    /** The longest `Retry-After` honoured, in seconds; a longer one is waited this long (default 60). */
    readonly maxRetryAfterSeconds?: number;
    /** The fetch to use (default: the global one). */
    readonly fetch?: (request: Request) => Promise<Response>;
}
/** An answer of the service that is not a success: its status and RFC 7807 problem. */
export declare class KbApiError extends Error {
    readonly status: number;
    readonly problem: Problem | undefined;
    constructor(status: number, problem: Problem | undefined, fallback: string);
}
/** Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date); 1 when absent or unreadable. */
export declare function retryAfterSeconds(header: string | null, now?: number): number;
/** A fetch that sends a request answered 429 or 503 again after its `Retry-After`, up to `maxRetries` times. */
export declare function retryingFetch(inner: (request: Request) => Promise<Response>, options: {
    maxRetries: number;
    maxRetryAfterSeconds: number;
}): (request: Request) => Promise<Response>;
/**
 * A fetch that gives every write without an `Idempotency-Key` a fresh random one, before
 * `inner` (which may send it again: every attempt carries the same key).
 */
export declare function idempotentFetch(inner: (request: Request) => Promise<Response>): (request: Request) => Promise<Response>;
/** What an upload sends beside the file. */
export interface UploadOptions {
    /** The file name (default: the Blob's name when it is a File, else `upload`). */
    readonly name?: string;
    readonly metadata?: Metadata;
    readonly source?: string;
    /** The item within `source` (a relative path, an object key), found again by {@link KbClient.lookup}. Upload only. */
    readonly sourceItem?: string;
    readonly changeReason?: string;
    /** The `Idempotency-Key` to send (default: a fresh random one, unless `idempotencyKeys` is false). */
    readonly idempotencyKey?: string;
}
export interface WaitOptions {
    /** Wait for this version (default: the latest when the call is made). */
    readonly version?: number;
    readonly timeoutMs?: number;
    readonly intervalMs?: number;
}
/** The query of a document list, without paging. */
export type ListFilters = Omit<NonNullable<paths['/api/v1/documents']['get']['parameters']['query']>, 'cursor' | 'page' | 'page_size'>;
export interface KbClient {
    /** Every operation of the API, typed from the OpenAPI document (openapi-fetch). */
    readonly api: Client<paths>;
    /** Uploads a file (multipart, with its metadata): version 1 of a new document, `pending`. */
    upload(file: Blob, options?: UploadOptions): Promise<UploadResult>;
    /** New content for a document: its next version, ingested again. */
    replace(documentId: string, file: Blob, options?: UploadOptions): Promise<Document>;
    /** Polls the document until the version is `completed`; rejects when it failed or on timeout. */
    waitForDocument(documentId: string, options?: WaitOptions): Promise<Document>;
    /** Every document of the workspace, newest first, page after page. */
    documents(filters?: ListFilters): AsyncIterableIterator<DocumentListItem>;
    getDocument(documentId: string): Promise<Document>;
    /**
     * The documents uploaded with these (source, source_item) pairs (at most 1000 a call), with their
     * latest version and content hash: what a bulk loader needs to skip unchanged files.
     */
    lookup(items: ReadonlyArray<{
        source: string;
        source_item: string;
    }>): Promise<DocumentLookupMatch[]>;
    search(request: SearchRequest): Promise<SearchResponse>;
    versions(documentId: string): Promise<VersionList>;
    compareVersions(documentId: string, from: number, to: number): Promise<VersionComparison>;
    rollback(documentId: string, targetVersion: number): Promise<RollbackResult>;
    /**
     * Mints a short-lived scoped token for an end user: it reads and searches only what its
     * `filters` and `sources` let through. Hand `token` to the end user's client (as its `apiKey`).
     */
    createToken(request: TokenRequest): Promise<ScopedToken>;
}
export declare function createKbClient(options: KbClientOptions): KbClient;
