import { AjvCompiler } from '@fastify/ajv-compiler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';

/** The OpenAPI document as a tool reads it: ids, components, headers, statuses, examples, aliases. */
// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document, read member by member
type Json = Record<string, any>;
let svc: TestApp;
let spec: Json;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(spec.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}

/** Resolves a `#/components/...` reference (one level). */
function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, key) => at[key], spec);
}

/** A schema with every reference replaced by what it names, at any depth (the document has no cycles). */
function deref(node: unknown): Json {
  if (Array.isArray(node)) return node.map(deref);
  if (node === null || typeof node !== 'object') return node as Json;
  const target = resolve(node as Json);
  if (target !== node) return deref(target);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, deref(value)]));
}

/** Validates a value against a schema of the document with the same Ajv the service validates with. */
function validator() {
  const compile = AjvCompiler()({}, { customOptions: { strict: false, allErrors: true } }) as unknown as (input: {
    schema: Json;
  }) => ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> };
  return (schema: Json, value: unknown): string | null => {
    const validate = compile({ schema: deref(schema) });
    return validate(value) ? null : JSON.stringify(validate.errors);
  };
}

beforeAll(async () => {
  svc = await buildTestApp({ env: { KB_EMBEDDING_PROVIDER: 'local' } });
  const res = await svc.request('GET', '/openapi.json', { key: null });
  expect(res.status).toBe(200);
  spec = res.body;
});
afterAll(async () => {
  await svc?.close();
});

describe('the OpenAPI document', () => {
  it('names the server it was read from and gives every operation a unique operationId', () => {
    expect(spec.servers).toEqual([{ url: svc.url, description: 'This service' }]);
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares every /v1 alias beside its /api/v1 operation', () => {
    const apiPaths = Object.keys(spec.paths).filter((p) => p.startsWith('/api/v1/'));
    expect(apiPaths.length).toBeGreaterThanOrEqual(11);
    for (const path of apiPaths) {
      const alias = spec.paths[path.replace('/api/v1/', '/v1/')];
      expect(alias, path).toBeDefined();
      for (const method of METHODS.filter((m) => spec.paths[path][m])) {
        expect(alias[method].operationId).toBe(`${spec.paths[path][method].operationId}V1`);
      }
    }
  });

  it('references one Problem schema from every error response, with its headers', () => {
    const text = JSON.stringify(spec.paths);
    expect(text).not.toContain('"application/problem+json":{"schema":{');
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const resolved = resolve(response);
        const headers = Object.keys(resolved.headers ?? {});
        expect(headers, `${method} ${path} ${status}`).toContain('X-Request-Id');
        if (status === '429') expect(headers).toContain('Retry-After');
        if (Number(status) >= 400 && resolved.content?.['application/problem+json']) {
          expect(response.$ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/responses\//);
          expect(resolved.content['application/problem+json'].schema).toEqual({
            $ref: '#/components/schemas/Problem',
          });
        }
        const authenticated = op.security === undefined;
        if (authenticated && Number(status) < 300) expect(headers).toContain('X-RateLimit-Remaining');
      }
    }
  });

  it('names every request and response body: a $ref to a schema in components.schemas, for generated clients', () => {
    const schemas = spec.components.schemas as Record<string, Json>;
    let bodies = 0;
    for (const { path, method, op } of operations()) {
      const media = [
        ...Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>).map(([t, m]) => [`request ${t}`, m]),
        ...Object.entries(op.responses as Record<string, Json>).flatMap(([status, response]) =>
          Object.entries((resolve(response).content ?? {}) as Record<string, Json>)
            .filter(([type]) => type !== 'text/html')
            .map(([t, m]) => [`${status} ${t}`, m]),
        ),
      ] as Array<[string, Json]>;
      for (const [what, m] of media) {
        const target = /^#\/components\/schemas\/([A-Za-z0-9]+)$/.exec(m.schema?.$ref ?? '')?.[1];
        expect(target, `${method} ${path} ${what}`).toBeDefined();
        expect(schemas[target as string], `${method} ${path} ${what}`).toBeDefined();
        bodies++;
      }
    }
    expect(bodies).toBeGreaterThan(100);
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'Document',
        'DocumentListItem',
        'DocumentList',
        'DocumentPage',
        'UploadForm',
        'UploadResult',
        'MetadataUpdate',
        'Version',
        'VersionList',
        'VersionDetail',
        'VersionComparison',
        'DiffEntry',
        'RollbackRequest',
        'RollbackResult',
        'Chunk',
        'ChunkList',
        'DocumentContext',
        'SearchRequest',
        'SearchResult',
        'SearchResponse',
        'AuditEntry',
        'AuditLog',
        'Problem',
        'Readiness',
      ]),
    );
    // Nested named schemas are references too, so a generator names them once.
    expect(schemas.SearchResponse?.properties.results.items).toEqual({ $ref: '#/components/schemas/SearchResult' });
    expect(schemas.DocumentList?.properties.documents.items).toEqual({
      $ref: '#/components/schemas/DocumentListItem',
    });
    const text = JSON.stringify(spec.paths);
    expect(text).not.toMatch(/"title":"[A-Z][A-Za-z0-9]*"/);
  });

  it('lists the statuses the code paths answer: 409 on compare and context, 503 on every authenticated operation', () => {
    const statuses = (path: string, method: string) => Object.keys(spec.paths[path][method].responses);
    expect(statuses('/api/v1/documents/{id}/versions/compare', 'get')).toContain('409');
    expect(statuses('/api/v1/chunks/{document_id}/context', 'get')).toContain('409');
    expect(statuses('/api/v1/search', 'post')).toEqual(expect.arrayContaining(['409', '413', '422']));
    for (const { path, method, op } of operations()) {
      if (op.security === undefined) expect(Object.keys(op.responses), `${method} ${path}`).toContain('503');
    }
  });

  it('has an example for every request and response body, each valid against its schema', () => {
    const check = validator();
    let checked = 0;
    for (const { path, method, op } of operations()) {
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
        expect(media.example, `${method} ${path} request ${type}`).toBeDefined();
        if (type === 'application/json') {
          expect(check(media.schema, media.example), `${method} ${path} request`).toBeNull();
        } else {
          expect(Object.keys(media.example).every((k) => k in deref(media.schema).properties)).toBe(true);
        }
        checked++;
      }
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const [type, media] of Object.entries((resolve(response).content ?? {}) as Record<string, Json>)) {
          expect(media.example, `${method} ${path} ${status} ${type}`).toBeDefined();
          if (type.includes('json')) {
            expect(check(media.schema, media.example), `${method} ${path} ${status}`).toBeNull();
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('describes upload forms as strictly as the server reads them', () => {
    const form = spec.paths['/api/v1/documents'].post.requestBody.content['multipart/form-data'];
    expect(deref(form.schema).additionalProperties).toBe(false);
    expect(deref(form.schema).required).toEqual(['file']);
    expect(form.encoding.file.contentType).toContain('application/pdf');
    const replace = spec.paths['/api/v1/documents/{id}'].put.requestBody.content['multipart/form-data'];
    expect(Object.keys(deref(replace.schema).properties).sort()).toEqual(['change_reason', 'file', 'metadata']);
    expect(deref(replace.schema).additionalProperties).toBe(false);
  });

  it('says that search highlights are HTML-escaped around their <em> markers', () => {
    const ok = spec.paths['/api/v1/search'].post.responses['200'].content['application/json'];
    const highlights = deref(ok.schema).properties.results.items.properties.highlights;
    expect(highlights.description).toMatch(/HTML-escaped/);
    expect(highlights.description).toContain('<em>');
  });
});
