import { startTestService } from '../support/test-service.ts';
import { describeWebhookBehaviour } from '../support/webhook-behaviour.ts';

describeWebhookBehaviour('embedded', (options) => startTestService(options));
