import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, postSignIn, send, signIn } from '../support/dashboard-client.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;
let owner: { email: string; password: string };
let member: { email: string; password: string };

beforeAll(async () => {
  svc = await startTestService({ stages: 'none', env: { KB_SIGNIN_MAX_FAILURES: '3' } });
  const accounts = svc.runtime.services.accounts;
  // Passwords of their own: a generated one would have to be changed first (tests/api/first-sign-in.test.ts).
  const o = await accounts.create({
    email: 'Owner@Example.com',
    workspaceIds: [svc.workspaceId],
    role: 'owner',
    password: 'owner passphrase for tests',
  });
  owner = { email: 'owner@example.com', password: o.password };
  const m = await accounts.create({
    email: 'member@example.com',
    workspaceIds: [svc.workspaceId, svc.otherWorkspaceId],
    role: 'member',
    password: 'member passphrase for tests',
  });
  member = { email: 'member@example.com', password: m.password };
});
afterAll(async () => {
  await svc?.close();
});

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and opens the API to the account', async () => {
    const res = await postSignIn(svc.url, 'OWNER@example.com', owner.password);
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^kb_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    expect(res.body).toMatchObject({
      account: { email: 'owner@example.com', role: 'owner', workspaces: [svc.workspaceId] },
      workspace: svc.workspaceId,
    });
    expect(res.text).not.toContain('scrypt');

    const client = await signIn(svc.url, owner.email, owner.password);
    expect((await client.request('GET', '/dashboard/api/session')).body.account.email).toBe('owner@example.com');
    const list = await client.request('GET', '/api/v1/documents');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('answers a wrong password and an unknown email with the same 401', async () => {
    const wrong = expectProblem(await postSignIn(svc.url, member.email, 'not-the-password'), 401, 'unauthorized');
    const unknown = expectProblem(await postSignIn(svc.url, 'nobody@example.com', 'whatever'), 401, 'unauthorized');
    expect(wrong.detail).toBe('Wrong email or password.');
    expect(unknown.detail).toBe(wrong.detail);
    expect((await postSignIn(svc.url, member.email, 'not-the-password')).headers.get('set-cookie')).toBeNull();
  });

  it('locks an account after repeated wrong passwords, even for the right one', async () => {
    const created = await svc.runtime.services.accounts.create({
      email: 'locked@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'member',
    });
    for (let i = 0; i < 3; i++) {
      expectProblem(await postSignIn(svc.url, 'locked@example.com', `wrong-${i}`), 401, 'unauthorized');
    }
    const locked = await postSignIn(svc.url, 'locked@example.com', created.password);
    const problem = expectProblem(locked, 429, 'rate-limit-exceeded');
    expect(problem.detail).toContain('locked');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('rejects a malformed sign-in body with 422 and no cookie', async () => {
    const res = await send(`${svc.url}/dashboard/api/session`, 'POST', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.com' }),
    });
    expectProblem(res, 422, 'validation-error');
    expect(res.headers.get('set-cookie')).toBeNull();
  });
});

describe('sessions', () => {
  it('signs out: the cookie is cleared and the old cookie opens nothing', async () => {
    const client = await signIn(svc.url, member.email, member.password);
    const out = await client.request('DELETE', '/dashboard/api/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^kb_session=;.*Max-Age=0/);
    expectProblem(await client.request('GET', '/dashboard/api/session'), 401, 'unauthorized');
    expectProblem(await client.request('GET', '/api/v1/documents'), 401, 'unauthorized');
  });

  it('refuses an expired session', async () => {
    const short = await startTestService({ stages: 'none', env: { KB_SESSION_TTL_SECONDS: '1' } });
    try {
      const { password } = await short.runtime.services.accounts.create({
        email: 'short-lived@example.com',
        workspaceIds: [short.workspaceId],
        role: 'owner',
        password: 'short-lived passphrase',
      });
      const client = await signIn(short.url, 'short-lived@example.com', password);
      expect((await client.request('GET', '/api/v1/documents')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const expired = expectProblem(await client.request('GET', '/dashboard/api/session'), 401, 'unauthorized');
      expect(expired.detail).toContain('expired');
      expectProblem(await client.request('GET', '/api/v1/documents'), 401, 'unauthorized');
    } finally {
      await short.close();
    }
  });

  it('refuses every state change without the session CSRF token, and changes nothing', async () => {
    const client = await signIn(svc.url, owner.email, owner.password);
    const before = (await client.request('GET', '/dashboard/api/keys')).body.keys.length;
    const create = { name: 'csrf probe', permissions: ['read'], plan: 'starter' };
    expectProblem(await client.request('POST', '/dashboard/api/keys', { json: create, csrf: null }), 403, 'forbidden');
    expectProblem(
      await client.request('POST', '/dashboard/api/keys', { json: create, csrf: 'forged' }),
      403,
      'forbidden',
    );
    expect((await client.request('GET', '/dashboard/api/keys')).body.keys.length).toBe(before);

    const upload = await svc.upload('note.txt', 'a note about tides');
    const id = upload.body.document_id as string;
    const patch = { metadata: { title: 'changed' } };
    expectProblem(
      await client.request('PATCH', `/api/v1/documents/${id}`, { json: patch, csrf: null }),
      403,
      'forbidden',
    );
    expectProblem(await client.request('DELETE', `/api/v1/documents/${id}`, { csrf: null }), 403, 'forbidden');
    expect((await svc.request('GET', `/api/v1/documents/${id}`)).body.version).toBe(1);
    expectProblem(await client.request('DELETE', '/dashboard/api/session', { csrf: null }), 403, 'forbidden');
    expect((await client.request('GET', '/dashboard/api/session')).status).toBe(200);

    const patched = await client.request('PATCH', `/api/v1/documents/${id}`, { json: patch });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toBe(2);
    const audit = await client.request('GET', `/api/v1/audit-logs?document_id=${id}&action=update`);
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0].actor).toEqual({ type: 'user', id: client.signIn.body.account.id });
  });
});

describe('changing the password', () => {
  it('replaces the password and signs out the other sessions, not this one', async () => {
    const { password } = await svc.runtime.services.accounts.create({
      email: 'changer@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'member',
    });
    const here = await signIn(svc.url, 'changer@example.com', password);
    const elsewhere = await signIn(svc.url, 'changer@example.com', password);
    const next = 'a much longer passphrase';

    const noCsrf = await here.request('POST', '/dashboard/api/session/password', {
      json: { current_password: password, new_password: next },
      csrf: null,
    });
    expectProblem(noCsrf, 403, 'forbidden');
    const wrong = expectProblem(
      await here.request('POST', '/dashboard/api/session/password', {
        json: { current_password: 'not it', new_password: 'short' },
      }),
      422,
      'validation-error',
    );
    expect(wrong.errors?.map((e) => e.field)).toEqual(['current_password', 'new_password']);
    expect((await postSignIn(svc.url, 'changer@example.com', password)).status).toBe(200);

    const changed = await here.request('POST', '/dashboard/api/session/password', {
      json: { current_password: password, new_password: next },
    });
    expect(changed.status).toBe(204);
    expectProblem(await postSignIn(svc.url, 'changer@example.com', password), 401, 'unauthorized');
    expect((await postSignIn(svc.url, 'changer@example.com', next)).status).toBe(200);
    expect((await here.request('GET', '/dashboard/api/session')).status).toBe(200);
    expectProblem(await elsewhere.request('GET', '/dashboard/api/session'), 401, 'unauthorized');
  });
});

describe('guessing the current password', () => {
  it('counts with the wrong passwords of sign-in and locks the account', async () => {
    const { password } = await svc.runtime.services.accounts.create({
      email: 'guessed@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'member',
    });
    const session = await signIn(svc.url, 'guessed@example.com', password);
    const change = (current: string) =>
      session.request('POST', '/dashboard/api/session/password', {
        json: { current_password: current, new_password: 'a new and long passphrase' },
      });
    // KB_SIGNIN_MAX_FAILURES is 3 here.
    for (let i = 0; i < 3; i++) expectProblem(await change(`guess-${i}`), 422, 'validation-error');
    const locked = await change(password);
    expect(expectProblem(locked, 429, 'rate-limit-exceeded').detail).toContain('locked');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expectProblem(await postSignIn(svc.url, 'guessed@example.com', password), 429, 'rate-limit-exceeded');
  });
});

describe('workspaces', () => {
  it("answers 404 for another workspace's document and for a workspace the account does not have", async () => {
    const client = await signIn(svc.url, owner.email, owner.password);
    const theirs = await svc.upload('theirs.txt', 'other workspace text', { key: svc.keys.otherWorkspace });
    const id = theirs.body.document_id as string;
    expectProblem(await client.request('GET', `/api/v1/documents/${id}`), 404, 'not-found');
    expectProblem(await client.request('GET', `/api/v1/documents/${id}/versions`), 404, 'not-found');
    const foreign = await client.request('GET', '/api/v1/documents', {
      headers: { 'x-kb-workspace': svc.otherWorkspaceId },
    });
    expectProblem(foreign, 404, 'not-found');
    expectProblem(
      await client.request('GET', '/dashboard/api/keys', { headers: { 'x-kb-workspace': svc.otherWorkspaceId } }),
      404,
      'not-found',
    );
  });

  it('lets an account with two workspaces choose one per request', async () => {
    const client = await signIn(svc.url, member.email, member.password);
    const theirs = await svc.upload('shared.txt', 'text of the second workspace', { key: svc.keys.otherWorkspace });
    const id = theirs.body.document_id as string;
    expectProblem(await client.request('GET', `/api/v1/documents/${id}`), 404, 'not-found');
    const chosen = await client.request('GET', `/api/v1/documents/${id}`, {
      headers: { 'x-kb-workspace': svc.otherWorkspaceId },
    });
    expect(chosen.status).toBe(200);
    expect(chosen.body.workspace_id).toBe(svc.otherWorkspaceId);
  });
});

describe('API keys in the dashboard', () => {
  let client: DashboardClient;
  beforeAll(async () => {
    client = await signIn(svc.url, owner.email, owner.password);
  });

  it('creates a key shown once, which works, and revokes it so that it answers 401; both are audited', async () => {
    const created = await client.request('POST', '/dashboard/api/keys', {
      json: { name: 'dashboard made', permissions: ['read', 'search'], plan: 'pro' },
    });
    expect(created.status).toBe(201);
    const { key, record } = created.body as { key: string; record: { id: string; prefix: string } };
    expect(key.startsWith(record.prefix)).toBe(true);
    const listed = (await client.request('GET', '/dashboard/api/keys')).body.keys;
    const row = listed.find((k: { id: string }) => k.id === record.id);
    expect(row).toMatchObject({
      name: 'dashboard made',
      permissions: ['read', 'search'],
      plan: 'pro',
      revoked_at: null,
    });
    expect(JSON.stringify(listed)).not.toContain(key);

    expect((await svc.request('GET', '/api/v1/documents', { key })).status).toBe(200);
    const revoked = await client.request('POST', `/dashboard/api/keys/${record.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.revoked_at).not.toBeNull();
    expectProblem(await svc.request('GET', '/api/v1/documents', { key }), 401, 'unauthorized');

    const audit = await client.request('GET', '/api/v1/audit-logs?limit=100');
    const mine = audit.body.entries.filter(
      (e: { after: { metadata: { key_id?: string } } | null }) => e.after?.metadata?.key_id === record.id,
    );
    expect(mine.map((e: { action: string }) => e.action)).toEqual(['key_create', 'key_revoke']);
    expect(mine[0].actor).toEqual({ type: 'user', id: client.signIn.body.account.id });
    const onlyRevokes = await client.request('GET', '/api/v1/audit-logs?action=key_revoke&limit=100');
    expect(onlyRevokes.body.entries.every((e: { action: string }) => e.action === 'key_revoke')).toBe(true);
  });

  it("lets only an owner create or revoke keys, and only the workspace's own", async () => {
    const memberClient = await signIn(svc.url, member.email, member.password);
    const json = { name: 'member try', permissions: ['read'], plan: 'starter' };
    expectProblem(await memberClient.request('POST', '/dashboard/api/keys', { json }), 403, 'forbidden');
    const other = await svc.createKey({ permissions: ['read'], workspaceId: svc.otherWorkspaceId });
    expectProblem(await client.request('POST', `/dashboard/api/keys/${other.id}/revoke`), 404, 'not-found');
    expect((await svc.request('GET', '/api/v1/documents', { key: other.key })).status).toBe(200);
  });

  it('rejects a key with unknown permissions with 422', async () => {
    const res = await client.request('POST', '/dashboard/api/keys', {
      json: { name: 'bad', permissions: ['admin'], plan: 'starter' },
    });
    expectProblem(res, 422, 'validation-error');
  });

  it('refuses the dashboard endpoints to an API key', async () => {
    expectProblem(await svc.request('GET', '/dashboard/api/keys'), 401, 'unauthorized');
  });
});

describe('the dashboard address', () => {
  it('redirects a browser asking for / to /dashboard/ and leaves API clients as they were', async () => {
    const browser = await send(`${svc.url}/`, 'GET', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/dashboard/');
    const api = await send(`${svc.url}/`, 'GET', { headers: { accept: 'application/json' } });
    expectProblem(api, 404, 'not-found');
  });
});
