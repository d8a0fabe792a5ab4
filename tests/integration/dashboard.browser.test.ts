import { randomBytes } from 'node:crypto';
import { type ChildService, kb, startChild, stopChild } from '../../support/child-service.ts';
import { describeDashboardInBrowser } from '../browser/dashboard.scenario.ts';
import { distributedEnv } from '../support/distributed-env.ts';

/** The same browser scenario on the distributed runtime: one API process and one worker on the native engines. */
describeDashboardInBrowser('distributed', async () => {
  const setup = distributedEnv();
  const env = { ...setup.env, KB_KEY_CACHE_MS: '0', KB_BOOTSTRAP_ACCOUNT: 'false' };
  const children: ChildService[] = [];
  try {
    children.push(await startChild(['serve'], env));
    children.push(await startChild(['worker', '--stages', 'all'], env, { waitForHttp: false }));
    const workspace = `ws-${randomBytes(4).toString('hex')}`;
    const created = JSON.parse(
      await kb(
        ['users', 'create', '--email', 'owner@example.com', '--workspace', workspace, '--role', 'owner', '--json'],
        env,
      ),
    ) as { password: string };
    return {
      url: (children[0] as ChildService).url,
      owner: { email: 'owner@example.com', password: created.password },
      async close() {
        for (const child of children.reverse()) await stopChild(child);
        await setup.cleanup();
      },
    };
  } catch (error) {
    for (const child of children.reverse()) await stopChild(child);
    await setup.cleanup();
    throw error;
  }
});
