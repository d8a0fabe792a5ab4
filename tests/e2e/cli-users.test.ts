import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KB_BIN, kb, REPO_ROOT, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { postSignIn, signIn } from '../support/dashboard-client.ts';

/** `kb …` with `input` on its standard input; resolves its standard output. */
function kbWithInput(args: string[], env: Record<string, string>, input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [KB_BIN, ...args],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
    child.stdin?.end(input);
  });
}

/** The first start's owner account, and `kb users …` against a running embedded server. */
describe('dashboard accounts from the command line', () => {
  const cleanups = cleanupsAfterAll();

  it('prints an owner password on first start only, and creates accounts that can sign in at once', {
    timeout: 240_000,
  }, async () => {
    const data = await tempDir('kb-users-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: data.path, KB_BOOTSTRAP_KEY: 'true', KB_BOOTSTRAP_ACCOUNT: 'true' };
    const server = await startChild(['serve', '--stages', 'none'], env);
    cleanups.push(() => stopChild(server));
    const printed = /email: +(\S+)\n +password: +(\S+)/.exec(server.output());
    expect(printed?.[1]).toBe('owner@kb.local');
    const ownerSignIn = await postSignIn(server.url, printed?.[1] ?? '', printed?.[2] ?? '');
    expect(ownerSignIn.status).toBe(200);
    expect(ownerSignIn.body).toMatchObject({ account: { role: 'owner', workspaces: ['default'] } });
    // The printed password must be changed before the dashboard opens.
    expect(ownerSignIn.body).toMatchObject({ password_change_required: true });
    const owner = await signIn(server.url, 'owner@kb.local', printed?.[2] ?? '');
    expect((await owner.request('GET', '/api/v1/documents')).body.error?.code).toBe('password_change_required');

    const created = JSON.parse(
      await kb(['users', 'create', '--email', 'Ana@Example.org', '--workspace', 'team-a,team-b', '--json'], env),
    ) as { email: string; role: string; workspaces: string[]; password: string };
    expect(created).toMatchObject({ email: 'ana@example.org', role: 'member', workspaces: ['team-a', 'team-b'] });
    const signedIn = await postSignIn(server.url, 'ana@example.org', created.password);
    expect(signedIn.status).toBe(200);
    expect((await postSignIn(server.url, 'ana@example.org', `${created.password}x`)).status).toBe(401);

    await expect(kb(['users', 'create', '--email', 'ana@example.org', '--workspace', 'team-a'], env)).rejects.toThrow(
      /already exists/,
    );
    await expect(
      kb(['users', 'create', '--email', 'not-an-address', '--workspace', 'team-a', '--role', 'owner'], env),
    ).rejects.toThrow(/not an email address/);

    // A password of the person's own, from standard input: not shown, not marked.
    const own = JSON.parse(
      await kbWithInput(
        ['users', 'create', '--email', 'bo@example.org', '--workspace', 'team-a', '--password-stdin', '--json'],
        env,
        'bo chose this passphrase\n',
      ),
    ) as Record<string, unknown>;
    expect(own).toMatchObject({ email: 'bo@example.org' });
    expect(own).not.toHaveProperty('password');
    const bo = await signIn(server.url, 'bo@example.org', 'bo chose this passphrase');
    expect(bo.signIn.body).toMatchObject({ password_change_required: false });
    expect((await bo.request('GET', '/api/v1/documents')).status).toBe(200);
    await expect(
      kbWithInput(
        ['users', 'create', '--email', 'cy@example.org', '--workspace', 'a', '--password-stdin'],
        env,
        'short',
      ),
    ).rejects.toThrow(/at least 12 characters/);

    // A reset: a new generated password, printed once and marked; the old sessions are signed out.
    const reset = await kb(['users', 'reset-password', '--email', 'bo@example.org'], env);
    const resetPassword = /password: +(\S+)/.exec(reset)?.[1] ?? '';
    expect(resetPassword).toMatch(/^[0-9A-Za-z]{24}$/);
    expect((await bo.request('GET', '/dashboard/api/session')).status).toBe(401);
    expect((await postSignIn(server.url, 'bo@example.org', resetPassword)).body).toMatchObject({
      password_change_required: true,
    });
    await expect(kb(['users', 'reset-password', '--email', 'nobody@example.org'], env)).rejects.toThrow(
      /No account with the email/,
    );

    const listed = await kb(['users', 'list'], env);
    expect(listed).toContain('ana@example.org');
    expect(listed).toContain('owner@kb.local');
    expect(listed).not.toContain('scrypt');

    await stopChild(server);
    const again = await startChild(['serve', '--stages', 'none'], env);
    cleanups.push(() => stopChild(again));
    expect(again.output()).not.toContain('password:');
  });
});
