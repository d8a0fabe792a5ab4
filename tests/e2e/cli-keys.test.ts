import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../core/runtime/runtime.ts';
import { type ChildService, createKey, kb, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { testConfig } from '../support/test-client.ts';

/** `npx kb keys …` against the data directory of a running embedded server. */
describe('kb keys while the server runs', () => {
  const cleanups = cleanupsAfterAll();

  it('creates, lists and revokes keys; the server honours a revocation within 5 s', async () => {
    const data = await tempDir('kb-keys-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: data.path, KB_BOOTSTRAP_KEY: 'true' };
    const server: ChildService = await startChild(['serve'], env);
    cleanups.push(() => stopChild(server));
    // First start printed a bootstrap key once.
    expect(server.output()).toMatch(/ink_[0-9A-Za-z]{32,}/);

    const created = await createKey(env, {
      workspace: 'team-a',
      name: 'reader',
      permissions: 'read,search',
      plan: 'pro',
    });
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.permissions).toEqual(['read', 'search']);
    expect(created.plan).toBe('pro');

    const list = await fetch(`${server.url}/api/v1/documents`, { headers: { 'X-API-Key': created.key } });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-ratelimit-limit')).toBe('500');
    const upload = await fetch(`${server.url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': created.key },
      body: new FormData(),
    });
    expect(upload.status).toBe(403);

    const listed = JSON.parse(await kb(['keys', 'list', '--workspace', 'team-a', '--json'], env)) as Array<{
      id: string;
      revoked_at: string | null;
    }>;
    expect(listed.map((k) => k.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const table = await kb(['keys', 'list'], env);
    expect(table).toContain('team-a');
    expect(table).toContain('default');

    expect(await kb(['keys', 'revoke', created.id], env)).toContain(`Revoked key ${created.id}`);
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 5000) {
      status = (await fetch(`${server.url}/api/v1/documents`, { headers: { 'X-API-Key': created.key } })).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(401);
    const after = JSON.parse(await kb(['keys', 'list', '--workspace', 'team-a', '--json'], env)) as Array<{
      revoked_at: string | null;
    }>;
    expect(after[0]?.revoked_at).not.toBeNull();

    // Revoking it again changes nothing, says so, and fails; --json prints the key either way.
    const again = kb(['keys', 'revoke', created.id, '--json'], env);
    await expect(again).rejects.toThrow(/was already revoked at/);
    const other = await createKey(env, { workspace: 'team-a', name: 'other', permissions: 'read' });
    const revoked = JSON.parse(await kb(['keys', 'revoke', other.id, '--json'], env)) as {
      id: string;
      revoked_at: string | null;
      already_revoked: boolean;
    };
    expect(revoked).toMatchObject({ id: other.id, already_revoked: false });
    expect(revoked.revoked_at).not.toBeNull();
    // Twelve `kb` processes one after another: a loaded machine needs more than the default minute.
  }, 180_000);

  it('refuses bad arguments with a clear message and a non-zero exit', async () => {
    const data = await tempDir('kb-keys-bad-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: data.path };
    await expect(
      kb(['keys', 'create', '--workspace', 'w', '--name', 'n', '--permissions', 'admin'], env),
    ).rejects.toThrow(/Permissions must be a non-empty subset of read, search, write/);
    await expect(kb(['keys', 'create', '--workspace', 'w'], env)).rejects.toThrow(
      /needs --workspace, --name and --permissions/,
    );
    await expect(kb(['keys', 'revoke', 'no-such-id'], env)).rejects.toThrow(/No key with id no-such-id/);
  });

  it('lists when each key was last used, as text too', async () => {
    const data = await tempDir('kb-keys-used-');
    cleanups.push(data.remove);
    const runtime = await createRuntime(testConfig(data.path), { stages: 'none' });
    let used: string;
    let unused: string;
    try {
      const keys = runtime.services.keys;
      used = (await keys.create({ workspaceId: 'team-u', name: 'used', permissions: ['read'], plan: 'starter' })).record
        .id;
      unused = (await keys.create({ workspaceId: 'team-u', name: 'unused', permissions: ['read'], plan: 'starter' }))
        .record.id;
      await runtime.ports.accountStore.touchKeys(new Map([[used, '2026-05-04T03:02:01.000Z']]));
    } finally {
      await runtime.close();
    }
    const table = (await kb(['keys', 'list', '--workspace', 'team-u'], { KB_DATA_DIR: data.path })).split('\n');
    expect(table[0]).toContain('LAST USED');
    expect(table.find((line) => line.startsWith(used))).toMatch(/2026-05-04T03:02:01\.000Z\s*$/);
    expect(table.find((line) => line.startsWith(unused))).toMatch(/\s-$/);
  });
});
