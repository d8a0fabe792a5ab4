import { describeShutdown } from '../support/shutdown-behaviour.ts';

/** Signals to `kb serve` on the embedded runtime. */
describeShutdown(() => ({}));
