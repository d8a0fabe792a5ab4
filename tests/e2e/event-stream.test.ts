import { describeEventStreamBehaviour } from '../support/event-stream-behaviour.ts';
import { startTestService } from '../support/test-service.ts';

describeEventStreamBehaviour('embedded', (options) => startTestService(options));
