import { describe, expect, it } from 'vitest';
import { kb, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { postSignIn } from '../support/dashboard-client.ts';

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
