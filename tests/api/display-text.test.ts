/**
 * Names and descriptions people read later (in the dashboard, the CLI) are refused with 422 naming
 * the field when they hold control characters or bidirectional overrides: a NUL, an ESC that
 * would drive a terminal, a right-to-left override that would make one name pass for another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../core/errors/kb-error.ts';
import { type DashboardClient, signIn } from '../support/dashboard-client.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/** One of each kind the service refuses. */
const UNSAFE = [
  ['NUL', 'a\u0000b'],
  ['ESC of a terminal escape sequence', 'red\u001b[31m'],
  ['line break', 'two\nlines'],
  ['DEL', 'x\u007f'],
  ['C1 control (CSI)', 'x\u009b2J'],
  ['right-to-left override', 'invoice\u202Efdp.exe'],
  ['left-to-right embedding', '\u202Aname'],
  ['first strong isolate', 'a\u2068b\u2069'],
  ['line separator', 'a\u2028b'],
] as const;

/** Right-to-left text with the marks it needs is a fine name. */
const HEBREW_WITH_RLM = 'מסמכים\u200F (docs)';

let svc: TestService;
let owner: DashboardClient;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none', env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  await svc.runtime.services.accounts.create({
    email: 'owner@example.com',
    workspaceIds: [svc.workspaceId],
    role: 'owner',
    password: 'owner passphrase for tests',
  });
  owner = await signIn(svc.url, 'owner@example.com', 'owner passphrase for tests');
});
afterAll(async () => {
  await svc?.close();
});

const webSource = (name: string) => ({ name, kind: 'web', urls: ['http://127.0.0.1:9/page.md'] });

describe('source names', () => {
  it.each(UNSAFE)('refuses a name with a %s (422 naming the field)', async (_what, name) => {
    const problem = expectProblem(
      await svc.request('POST', '/api/v1/sources', { json: webSource(name) }),
      422,
      'validation-error',
    );
    expect(problem.errors).toEqual([{ field: 'name', message: expect.stringMatching(/must not contain control/) }]);
  });

  it('accepts right-to-left text with its marks, and stores nothing refused', async () => {
    const res = await svc.request('POST', '/api/v1/sources', { json: webSource(HEBREW_WITH_RLM) });
    expect(res.status, res.text).toBe(201);
    const names = (await svc.request('GET', '/api/v1/sources')).body.sources.map((s: { name: string }) => s.name);
    expect(names).toEqual([HEBREW_WITH_RLM]);
  });

  it('is refused by the service itself too, naming the character', async () => {
    const refusal = await svc.runtime.services.sources
      .create(
        { workspaceId: svc.workspaceId, keyId: 'test', traceId: 'test' },
        { ...webSource('a\u202Eb'), kind: 'web' },
      )
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KbError);
    expect((refusal as KbError).errors).toEqual([{ field: 'name', message: expect.stringContaining('found U+202E') }]);
  });
});

describe('webhook descriptions', () => {
  it.each(UNSAFE)('refuses a description with a %s, on create and on change', async (_what, description) => {
    const url = 'http://127.0.0.1:9/hook';
    const created = await svc.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'], description } });
    expect(expectProblem(created, 422, 'validation-error').errors).toEqual([
      { field: 'description', message: expect.stringMatching(/must not contain control/) },
    ]);
    const fine = await svc.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'], description: 'ok' } });
    expect(fine.status, fine.text).toBe(201);
    const changed = await svc.request('PATCH', `/api/v1/webhooks/${fine.body.id}`, { json: { description } });
    expect(expectProblem(changed, 422, 'validation-error').errors).toEqual([
      { field: 'description', message: expect.stringMatching(/must not contain control/) },
    ]);
    expect((await svc.request('GET', `/api/v1/webhooks/${fine.body.id}`)).body.description).toBe('ok');
    await svc.request('DELETE', `/api/v1/webhooks/${fine.body.id}`);
  });
});

describe('API key names', () => {
  it.each(UNSAFE)(
    'refuses a name with a %s in the dashboard and in the service (kb keys create)',
    async (_what, name) => {
      const res = await owner.request('POST', '/dashboard/api/keys', {
        json: { name, permissions: ['read'], plan: 'starter' },
      });
      expect(expectProblem(res, 422, 'validation-error').errors).toEqual([
        { field: 'name', message: expect.stringMatching(/must not contain control/) },
      ]);
      const refusal = await svc.runtime.services.keys
        .create({ workspaceId: svc.workspaceId, name, permissions: ['read'], plan: 'starter' })
        .catch((error: unknown) => error);
      expect(refusal).toMatchObject({ code: 'validation-error', errors: [{ field: 'name' }] });
    },
  );

  it('refuses an account email with a bidirectional override', async () => {
    const refusal = await svc.runtime.services.accounts
      .create({ email: 'mallory\u202E@example.com', workspaceIds: [svc.workspaceId], role: 'member' })
      .catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'validation-error' });
  });
});

describe('document labels', () => {
  const multipart = (filename: string, source?: string) =>
    [
      '--kbBoundary',
      `Content-Disposition: form-data; name="file"; filename="${filename}"`,
      'Content-Type: text/plain',
      '',
      'hello',
      ...(source === undefined ? [] : ['--kbBoundary', 'Content-Disposition: form-data; name="source"', '', source]),
      '--kbBoundary--',
      '',
    ].join('\r\n');
  const post = (body: string) =>
    svc.request('POST', '/api/v1/documents', {
      body,
      headers: { 'content-type': 'multipart/form-data; boundary=kbBoundary' },
    });

  it('refuses a source label with a right-to-left override', async () => {
    const problem = expectProblem(await post(multipart('note.txt', 'crm\u202Etxt')), 422, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'source', message: expect.stringContaining('found U+202E') }]);
  });

  it('refuses a file name with a right-to-left override', async () => {
    const problem = expectProblem(await post(multipart('invoice\u202Etxt.exe.txt')), 422, 'validation-error');
    expect(problem.errors?.[0]).toMatchObject({ field: 'file', message: expect.stringContaining('U+202E') });
    expect((await svc.request('GET', '/api/v1/documents')).body.documents).toEqual([]);
  });
});
