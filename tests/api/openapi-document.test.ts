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

/** Resolves `#/components/...` references (one level is all the document uses). */
function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, key) => at[key], spec);
}

/** Validates a value against a schema of the document with the same Ajv the service validates with. */
function validator() {
  const compile = AjvCompiler()({}, { customOptions: { strict: false, allErrors: true } }) as unknown as (input: {
    schema: Json;
  }) => ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> };
  const problem = JSON.stringify(spec.components.schemas.Problem);
  return (schema: Json, value: unknown): string | null => {
    const inlined = JSON.parse(JSON.stringify(schema).replaceAll('{"$ref":"#/components/schemas/Problem"}', problem));
    const validate = compile({ schema: inlined });
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
          expect(Object.keys(media.example).every((k) => k in media.schema.properties)).toBe(true);
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
    expect(form.schema.additionalProperties).toBe(false);
    expect(form.schema.required).toEqual(['file']);
    expect(form.encoding.file.contentType).toContain('application/pdf');
    const replace = spec.paths['/api/v1/documents/{id}'].put.requestBody.content['multipart/form-data'];
    expect(Object.keys(replace.schema.properties).sort()).toEqual(['change_reason', 'file', 'metadata']);
    expect(replace.schema.additionalProperties).toBe(false);
  });

  it('says that search highlights are HTML-escaped around their <em> markers', () => {
    const ok = spec.paths['/api/v1/search'].post.responses['200'].content['application/json'];
    const highlights = ok.schema.properties.results.items.properties.highlights;
    expect(highlights.description).toMatch(/HTML-escaped/);
    expect(highlights.description).toContain('<em>');
  });
});
