/**
 * Deletions and purges answered while the log refused their notifications, on the embedded
 * runtime over a real socket: see `tests/support/notification-outbox-behaviour.ts`.
 */
import { describeNotificationOutbox } from '../support/notification-outbox-behaviour.ts';

describeNotificationOutbox('embedded', () => ({ env: {}, cleanup: async () => {} }));
