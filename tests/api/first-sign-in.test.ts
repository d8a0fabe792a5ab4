/**
 * A password the service generated must be replaced at the first sign-in: until then the session
 * opens only the session read, the password change and sign-out (403 `password_change_required`
 * elsewhere); API keys are never affected; a chosen password is not marked; a reset marks again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, postSignIn, signIn } from '../support/dashboard-client.ts';
import { type ApiResponse, expectProblem, startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none' });
});
afterAll(async () => {
  await svc?.close();
});

/** A 403 that tells the dashboard to ask for a new password. */
function expectPasswordChangeRequired(res: ApiResponse): void {
  const problem = expectProblem(res, 403, 'forbidden');
  expect(problem.title).toBe('Password change required');
  expect(problem.error?.code).toBe('password_change_required');
  expect(problem.detail).toContain('choose your own');
}

/** The dashboard requests a signed-in person makes first: documents, search, keys, usage, an upload. */
async function everydayRequests(client: DashboardClient): Promise<ApiResponse[]> {
  const form = new FormData();
  form.append('file', new Blob(['a note about tides'], { type: 'text/plain' }), 'tides.txt');
  return [
    await client.request('GET', '/api/v1/documents'),
    await client.request('POST', '/api/v1/search', { json: { query: 'tides', mode: 'keyword' } }),
    await client.request('GET', '/dashboard/api/keys'),
    await client.request('GET', '/dashboard/api/usage'),
    await client.request('POST', '/api/v1/documents', { body: form }),
  ];
}

describe('first sign-in with a generated password', () => {
  it('answers 403 password_change_required to everything but the change, and works normally after it', async () => {
    const { password } = await svc.runtime.services.accounts.create({
      email: 'printed@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
    });
    const signedIn = await postSignIn(svc.url, 'printed@example.com', password);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ account: { email: 'printed@example.com' }, password_change_required: true });

    const client = await signIn(svc.url, 'printed@example.com', password);
    const session = await client.request('GET', '/dashboard/api/session');
    expect(session.status).toBe(200);
    expect(session.body.password_change_required).toBe(true);
    for (const res of await everydayRequests(client)) expectPasswordChangeRequired(res);
    // Nothing was stored by the refused upload; API keys work as before.
    const listed = await svc.request('GET', '/api/v1/documents');
    expect(listed.status).toBe(200);
    expect(listed.body.documents).toEqual([]);

    // The change keeps the usual rules: the current password must be right, the new one long enough.
    const wrong = expectProblem(
      await client.request('POST', '/dashboard/api/session/password', {
        json: { current_password: 'not the printed one', new_password: 'short' },
      }),
      422,
      'validation-error',
    );
    expect(wrong.errors?.map((e) => e.field)).toEqual(['current_password', 'new_password']);
    expectPasswordChangeRequired(await client.request('GET', '/api/v1/documents'));

    const mine = 'a passphrase of my own choosing';
    const changed = await client.request('POST', '/dashboard/api/session/password', {
      json: { current_password: password, new_password: mine },
    });
    expect(changed.status).toBe(204);
    expect((await client.request('GET', '/dashboard/api/session')).body.password_change_required).toBe(false);
    const [documents, search, keys, usage, upload] = await everydayRequests(client);
    expect(documents?.status).toBe(200);
    expect(search?.status).toBe(200);
    expect(keys?.status).toBe(200);
    expect(usage?.status).toBe(200);
    expect(upload?.status).toBe(201);

    // Signing in again with the chosen password goes straight in; the printed one is gone.
    expectProblem(await postSignIn(svc.url, 'printed@example.com', password), 401, 'unauthorized');
    const again = await signIn(svc.url, 'printed@example.com', mine);
    expect(again.signIn.body).toMatchObject({ password_change_required: false });
    expect((await again.request('GET', '/api/v1/documents')).status).toBe(200);
  });

  it('lets an account with a generated password sign out', async () => {
    const { password } = await svc.runtime.services.accounts.create({
      email: 'leaving@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'member',
    });
    const client = await signIn(svc.url, 'leaving@example.com', password);
    expect((await client.request('DELETE', '/dashboard/api/session')).status).toBe(204);
    expectProblem(await client.request('GET', '/dashboard/api/session'), 401, 'unauthorized');
  });

  it('does not mark a password the person chose, and refuses one shorter than 12 characters', async () => {
    const accounts = svc.runtime.services.accounts;
    await accounts.create({
      email: 'chosen@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'member',
      password: 'my own long passphrase',
    });
    const client = await signIn(svc.url, 'chosen@example.com', 'my own long passphrase');
    expect(client.signIn.body).toMatchObject({ password_change_required: false });
    expect((await client.request('GET', '/api/v1/documents')).status).toBe(200);
    await expect(
      accounts.create({
        email: 'short@example.com',
        workspaceIds: [svc.workspaceId],
        role: 'member',
        password: 'short',
      }),
    ).rejects.toMatchObject({ code: 'validation-error' });
  });

  it('marks a reset password again and signs the account out everywhere', async () => {
    const accounts = svc.runtime.services.accounts;
    await accounts.create({
      email: 'forgetful@example.com',
      workspaceIds: [svc.workspaceId],
      role: 'owner',
      password: 'the passphrase I forgot',
    });
    const before = await signIn(svc.url, 'forgetful@example.com', 'the passphrase I forgot');
    const { password } = await accounts.resetPassword('Forgetful@Example.com');
    expectProblem(await before.request('GET', '/dashboard/api/session'), 401, 'unauthorized');
    expectProblem(await postSignIn(svc.url, 'forgetful@example.com', 'the passphrase I forgot'), 401, 'unauthorized');

    const after = await signIn(svc.url, 'forgetful@example.com', password);
    expect(after.signIn.body).toMatchObject({ password_change_required: true });
    expectPasswordChangeRequired(await after.request('GET', '/api/v1/documents'));
    const changed = await after.request('POST', '/dashboard/api/session/password', {
      json: { current_password: password, new_password: 'a passphrase to remember' },
    });
    expect(changed.status).toBe(204);
    expect((await after.request('GET', '/api/v1/documents')).status).toBe(200);
    await expect(accounts.resetPassword('nobody@example.com')).rejects.toMatchObject({ code: 'not-found' });
  });
});
