/**
 * The knowledge-base document service's TypeScript client. `api` is the generated part: every
 * operation of the service's OpenAPI document, typed from it (openapi-typescript types over
 * openapi-fetch). Around it, only what generation cannot give: a multipart upload with metadata,
 * waiting until a version is ingested, iterating over every page of a list, a fresh
 * `Idempotency-Key` on every write (so a write retried after a lost answer is applied once), and
 * retrying a request answered 429 or 503 after its `Retry-After`.
 */
import createClient, { type Client } from 'openapi-fetch';
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
export class KbApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;
  constructor(status: number, problem: Problem | undefined, fallback: string) {
    super(problem ? `${status} ${problem.title}: ${problem.detail}` : `${status} ${fallback}`);
    this.name = 'KbApiError';
    this.status = status;
    this.problem = problem;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date); 1 when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number {
  if (header === null) return 1;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(header);
  return Number.isNaN(at) ? 1 : Math.max(0, (at - now) / 1000);
}

/** Statuses a request is sent again for, after the answer's `Retry-After`. */
const RETRIED_STATUSES = new Set([429, 503]);

/** A fetch that sends a request answered 429 or 503 again after its `Retry-After`, up to `maxRetries` times. */
export function retryingFetch(
  inner: (request: Request) => Promise<Response>,
  options: { maxRetries: number; maxRetryAfterSeconds: number },
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await inner(attempt < options.maxRetries ? request.clone() : request);
      if (!RETRIED_STATUSES.has(response.status) || attempt >= options.maxRetries) return response;
      const wait = Math.min(retryAfterSeconds(response.headers.get('retry-after')), options.maxRetryAfterSeconds);
      await response.body?.cancel();
      await sleep(wait * 1000);
    }
  };
}

/** Writes sent as POST that only read: they take no `Idempotency-Key`. */
const READS_BY_POST = [/\/search$/, /\/documents\/lookup$/];
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A fetch that gives every write without an `Idempotency-Key` a fresh random one, before
 * `inner` (which may send it again: every attempt carries the same key).
 */
export function idempotentFetch(
  inner: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (
      !WRITE_METHODS.has(request.method) ||
      request.headers.has('idempotency-key') ||
      READS_BY_POST.some((read) => read.test(path))
    ) {
      return inner(request);
    }
    const headers = new Headers(request.headers);
    headers.set('Idempotency-Key', crypto.randomUUID());
    return inner(new Request(request, { headers }));
  };
}

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
export type ListFilters = Omit<
  NonNullable<paths['/api/v1/documents']['get']['parameters']['query']>,
  'cursor' | 'page' | 'page_size'
>;

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
  lookup(items: ReadonlyArray<{ source: string; source_item: string }>): Promise<DocumentLookupMatch[]>;
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

/** The data of a successful answer, or a {@link KbApiError}. */
function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  const problem = result.error as Problem | undefined;
  throw new KbApiError(
    result.response.status,
    problem && typeof problem === 'object' && 'detail' in problem ? problem : undefined,
    result.response.statusText,
  );
}

function uploadForm(file: Blob, options: UploadOptions): FormData {
  const form = new FormData();
  if (options.metadata !== undefined) form.append('metadata', JSON.stringify(options.metadata));
  if (options.source !== undefined) form.append('source', options.source);
  if (options.sourceItem !== undefined) form.append('source_item', options.sourceItem);
  if (options.changeReason !== undefined) form.append('change_reason', options.changeReason);
  const fileName = options.name ?? (typeof File !== 'undefined' && file instanceof File ? file.name : 'upload');
  form.append('file', file, fileName);
  return form;
}

export function createKbClient(options: KbClientOptions): KbClient {
  const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retrying = retryingFetch(inner, {
    maxRetries: options.maxRetries ?? 5,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 60,
  });
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-API-Key': options.apiKey },
    fetch: options.idempotencyKeys === false ? retrying : idempotentFetch(retrying),
  });
  const asForm = (form: FormData, uploadOptions: UploadOptions) => ({
    body: {} as never,
    bodySerializer: () => form,
    ...(uploadOptions.idempotencyKey !== undefined
      ? { headers: { 'Idempotency-Key': uploadOptions.idempotencyKey } }
      : {}),
  });

  const client: KbClient = {
    api,
    async upload(file, uploadOptions = {}) {
      return unwrap(await api.POST('/api/v1/documents', asForm(uploadForm(file, uploadOptions), uploadOptions)));
    },
    async replace(documentId, file, uploadOptions = {}) {
      return unwrap(
        await api.PUT('/api/v1/documents/{id}', {
          params: { path: { id: documentId } },
          // A new version keeps its document's source item: the form takes none.
          ...asForm(uploadForm(file, { ...uploadOptions, source: undefined, sourceItem: undefined }), uploadOptions),
        }),
      );
    },
    async getDocument(documentId) {
      return unwrap(await api.GET('/api/v1/documents/{id}', { params: { path: { id: documentId } } }));
    },
    async waitForDocument(documentId, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 120_000);
      let version = waitOptions.version;
      for (;;) {
        const doc = await client.getDocument(documentId);
        version ??= doc.version;
        if (doc.version >= version && doc.status === 'completed') return doc;
        if (doc.version === version && doc.status === 'failed') {
          throw new Error(`Version ${version} of ${documentId} failed: ${doc.error?.message ?? 'no reason given'}`);
        }
        if (Date.now() > deadline) {
          throw new Error(`Version ${version} of ${documentId} is still ${doc.status} after waiting.`);
        }
        await sleep(waitOptions.intervalMs ?? 500);
      }
    },
    async *documents(filters = {}) {
      let cursor: string | undefined;
      for (;;) {
        const page = unwrap(
          await api.GET('/api/v1/documents', { params: { query: { ...filters, ...(cursor ? { cursor } : {}) } } }),
        );
        if (!('pagination' in page)) throw new Error('The service answered an offset page to a cursor request.');
        yield* page.documents;
        if (!page.pagination.has_more || !page.pagination.next_cursor) return;
        cursor = page.pagination.next_cursor;
      }
    },
    async lookup(items) {
      return unwrap(await api.POST('/api/v1/documents/lookup', { body: { items: [...items] } })).documents;
    },
    async search(request) {
      return unwrap(await api.POST('/api/v1/search', { body: request }));
    },
    async versions(documentId) {
      return unwrap(await api.GET('/api/v1/documents/{id}/versions', { params: { path: { id: documentId } } }));
    },
    async compareVersions(documentId, from, to) {
      const answer = await api.GET('/api/v1/documents/{id}/versions/compare', {
        params: { path: { id: documentId }, query: { from, to } },
      });
      // openapi-fetch's data type drops members whose only type is null (`from_index` of an
      // added chunk); the body is the schema's VersionComparison.
      return unwrap(answer) as unknown as VersionComparison;
    },
    async rollback(documentId, targetVersion) {
      return unwrap(
        await api.POST('/api/v1/documents/{id}/rollback', {
          params: { path: { id: documentId } },
          body: { target_version: targetVersion },
        }),
      );
    },
    async createToken(request) {
      return unwrap(await api.POST('/api/v1/tokens', { body: request }));
    },
  };
  return client;
}
