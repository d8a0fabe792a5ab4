/**
 * OpenAPI examples of the source operations (create, list, read, change, remove, sync, runs).
 * Assembled, and typed, in `openapi-examples.ts`.
 */
const SOURCE_ID = '019abf10-3c2e-7d41-9a6b-2f1e8c7d5a30';
const RUN_ID = '019abf10-5a7c-7b12-8e3d-9c4f1a2b6d71';

const RUN = {
  run_id: RUN_ID,
  source_id: SOURCE_ID,
  status: 'completed',
  allow_mass_delete: false,
  started_at: '2026-03-02T08:10:00.120Z',
  finished_at: '2026-03-02T08:10:01.870Z',
  counts: { seen: 42, created: 3, updated: 1, unchanged: 37, deleted: 0, failed: 1, deletions_held: 0 },
  errors: [
    {
      item: 'images/logo.png',
      code: 'unsupported-type',
      detail:
        'Unsupported file type image/png. Allowed types: text/plain, text/markdown, text/csv, application/json, application/pdf, application/vnd.openxmlformats-officedocument.wordprocessingml.document, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.',
    },
  ],
};

const SOURCE = {
  id: SOURCE_ID,
  name: 'handbook',
  kind: 'folder',
  path: '/srv/shared/handbook',
  include: ['**/*.md'],
  exclude: ['drafts/**'],
  metadata: { team: 'ops' },
  schedule: 'PT15M',
  created_at: '2026-03-02T08:09:58.004Z',
  updated_at: '2026-03-02T08:09:58.004Z',
  status: 'completed',
  last_run: RUN,
};

export const SOURCE_EXAMPLES = {
  createSource: {
    request: {
      name: 'handbook',
      kind: 'folder',
      path: '/srv/shared/handbook',
      include: ['**/*.md'],
      exclude: ['drafts/**'],
      metadata: { team: 'ops' },
      schedule: 'PT15M',
    },
    responses: { '201': { ...SOURCE, status: 'never_synced', last_run: null } },
  },
  listSources: { responses: { '200': { sources: [SOURCE] } } },
  getSource: { responses: { '200': SOURCE } },
  updateSource: {
    request: { schedule: 'PT1H', exclude: ['drafts/**', 'archive/**'] },
    responses: {
      '200': {
        ...SOURCE,
        schedule: 'PT1H',
        exclude: ['drafts/**', 'archive/**'],
        updated_at: '2026-03-02T09:00:00.000Z',
      },
    },
  },
  deleteSource: { responses: {} },
  syncSource: { responses: { '202': { run_id: RUN_ID, status: 'running' } } },
  listSourceRuns: { responses: { '200': { runs: [RUN] } } },
  getSourceRun: { responses: { '200': RUN } },
};
