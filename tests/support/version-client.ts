/**
 * Small HTTP helpers for the version and time tests, on top of the test service: search with
 * `as_of`, new content through PUT under either prefix, and waiting for one version to complete.
 */
import type { SearchResultView, VersionDetailView, VersionView } from '../../core/model/response-views.model.ts';
import type { ApiResponse, TestService } from './test-service.ts';

export type Prefix = '/api/v1' | '/v1';

export interface SearchOptions {
  readonly asOf?: string | Date;
  readonly documentIds?: readonly string[];
  readonly metadata?: Record<string, string | number | boolean | Array<string | number | boolean>>;
  readonly mode?: 'hybrid' | 'semantic' | 'keyword';
  readonly limit?: number;
  readonly prefix?: Prefix;
  readonly key?: string;
}

export interface SearchBody {
  query: string;
  mode: string;
  as_of: string | null;
  results: SearchResultView[];
  took_ms: number;
  warnings?: string[];
}

/** POST /search; fails the test on anything but 200. */
export async function search(svc: TestService, query: string, options: SearchOptions = {}): Promise<SearchBody> {
  const filters: Record<string, unknown> = {};
  if (options.documentIds) filters.document_ids = options.documentIds;
  if (options.metadata) filters.metadata = options.metadata;
  const json: Record<string, unknown> = { query, limit: options.limit ?? 50 };
  if (options.asOf !== undefined) {
    json.as_of = options.asOf instanceof Date ? options.asOf.toISOString() : options.asOf;
  }
  if (options.mode) json.mode = options.mode;
  if (Object.keys(filters).length > 0) json.filters = filters;
  const res = await svc.request<SearchBody>('POST', `${options.prefix ?? '/api/v1'}/search`, {
    json,
    ...(options.key ? { key: options.key } : {}),
  });
  if (res.status !== 200) throw new Error(`search answered ${res.status}: ${res.text}`);
  return res.body;
}

export interface PutOptions {
  readonly prefix?: Prefix;
  readonly metadata?: Record<string, unknown>;
  readonly changeReason?: string;
  readonly key?: string;
  readonly type?: string;
  readonly headers?: Record<string, string>;
}

/** PUT /documents/:id (multipart) with new content. */
export function putContent(
  svc: TestService,
  documentId: string,
  name: string,
  content: string,
  options: PutOptions = {},
  // biome-ignore lint/suspicious/noExplicitAny: the document view or a problem, narrowed by each test
): Promise<ApiResponse<any>> {
  const form = new FormData();
  if (options.metadata !== undefined) form.append('metadata', JSON.stringify(options.metadata));
  if (options.changeReason !== undefined) form.append('change_reason', options.changeReason);
  form.append('file', new Blob([content], { type: options.type ?? 'text/plain' }), name);
  return svc.request('PUT', `${options.prefix ?? '/api/v1'}/documents/${documentId}`, {
    body: form,
    ...(options.key ? { key: options.key } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
}

/** Polls one version until `completed`; throws when it fails or the time runs out. */
export async function waitForVersion(
  svc: TestService,
  documentId: string,
  version: number,
  options: { timeoutMs?: number; key?: string; intervalMs?: number } = {},
): Promise<VersionDetailView> {
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  let last: VersionDetailView | undefined;
  while (Date.now() < deadline) {
    const res = await svc.request<VersionDetailView>('GET', `/api/v1/documents/${documentId}/versions/${version}`, {
      ...(options.key ? { key: options.key } : {}),
    });
    if (res.status !== 200) throw new Error(`GET version ${version} answered ${res.status}: ${res.text}`);
    last = res.body;
    if (last.status === 'completed') return last;
    if (last.status === 'failed') throw new Error(`version ${version} failed: ${JSON.stringify(last.error)}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
  throw new Error(`version ${version} of ${documentId} did not complete; last status ${last?.status}`);
}

/** GET /documents/:id/versions (newest first); fails the test on anything but 200. */
export async function listVersions(svc: TestService, documentId: string, prefix: Prefix = '/api/v1', key?: string) {
  const res = await svc.request<{ document_id: string; versions: VersionView[] }>(
    'GET',
    `${prefix}/documents/${documentId}/versions`,
    key ? { key } : {},
  );
  if (res.status !== 200) throw new Error(`GET versions answered ${res.status}: ${res.text}`);
  return res.body.versions;
}

/** A millisecond after `t`, as ISO 8601. */
export const justAfter = (t: number): string => new Date(t + 1).toISOString();
