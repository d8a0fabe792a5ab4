import { startTestService } from '../support/test-service.ts';
import { describeDashboardInBrowser } from './dashboard.scenario.ts';

describeDashboardInBrowser('embedded', async () => {
  const svc = await startTestService({ stages: 'all' });
  const { password } = await svc.runtime.services.accounts.create({
    email: 'owner@example.com',
    workspaceIds: [svc.workspaceId],
    role: 'owner',
  });
  return { url: svc.url, owner: { email: 'owner@example.com', password }, close: () => svc.close() };
});
