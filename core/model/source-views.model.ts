/** The HTTP views of sources of synchronisation and their runs (snake_case, as the API answers). */

export interface RunView {
  run_id: string;
  source_id: string;
  status: 'running' | 'completed' | 'failed';
  allow_mass_delete: boolean;
  started_at: string;
  finished_at: string | null;
  counts: {
    seen: number;
    created: number;
    updated: number;
    unchanged: number;
    deleted: number;
    failed: number;
    deletions_held: number;
  };
  errors: Array<{ item: string | null; code: string; detail: string }>;
}

export interface SourceView {
  id: string;
  name: string;
  kind: 'folder' | 's3' | 'web';
  path?: string;
  urls?: string[];
  sitemap?: string;
  endpoint?: string;
  bucket?: string;
  prefix?: string;
  region?: string | null;
  /** Whether credentials are stored (encrypted); they are never shown. */
  credentials?: 'stored' | 'none';
  include: string[];
  exclude: string[];
  metadata: Record<string, unknown>;
  schedule: string | null;
  created_at: string;
  updated_at: string;
  /** The last run's status, or `never_synced`. */
  status: 'never_synced' | 'running' | 'completed' | 'failed';
  last_run: RunView | null;
}

export interface SyncStartedView {
  run_id: string;
  status: 'running';
}
