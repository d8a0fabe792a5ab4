import { defineConfig } from 'vitest/config';

// `npm run test:integration`: the same contract suites against the real engines started by
// `deploy/native/up` (configured through `eval "$(deploy/native/env)"`), plus the distributed
// end-to-end scenarios.
export default defineConfig({
  test: {
    include: ['tests/integration/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
