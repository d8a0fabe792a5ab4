/** The HTTP calls `kb sources` makes, and their failures as one line. */
import type { RunView, SourceView } from '../../../core/model/source-views.model.ts';
import { networkProblem } from './service-client.ts';

/** A request the service refused or could not answer, with the line to print. */
export class SourcesRequestError extends Error {
  override readonly name = 'SourcesRequestError';
}

export interface SourcesClient {
  add(body: Record<string, unknown>): Promise<SourceView>;
  list(): Promise<SourceView[]>;
  /** By id, or else by name. */
  find(nameOrId: string): Promise<SourceView>;
  sync(id: string, allowMassDelete: boolean): Promise<{ run_id: string; status: 'running' }>;
  runs(id: string, limit: number): Promise<RunView[]>;
  run(id: string, runId: string): Promise<RunView>;
  remove(id: string, deleteDocuments: boolean): Promise<void>;
}

export function createSourcesClient(base: string, key: string): SourcesClient {
  async function call<T>(method: string, pathname: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${base}/api/v1${pathname}`, {
        method,
        headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new SourcesRequestError(`cannot reach the service at ${base} (${networkProblem(error)}).`);
    }
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (!response.ok) {
      const problem = parsed as { detail?: string; errors?: Array<{ field: string; message: string }> } | null;
      const fields = problem?.errors?.map((e) => `${e.field} ${e.message}`).join('; ');
      throw new SourcesRequestError(`${response.status}: ${problem?.detail ?? text}${fields ? ` (${fields})` : ''}`);
    }
    return parsed as T;
  }

  const list = async () => (await call<{ sources: SourceView[] }>('GET', '/sources')).sources;
  return {
    add: (body) => call('POST', '/sources', body),
    list,
    async find(nameOrId) {
      const sources = await list();
      const found = sources.find((s) => s.id === nameOrId) ?? sources.find((s) => s.name === nameOrId);
      if (!found) throw new SourcesRequestError(`no source named "${nameOrId}" in this workspace.`);
      return found;
    },
    sync: (id, allowMassDelete) =>
      call('POST', `/sources/${id}/sync${allowMassDelete ? '?allow_mass_delete=true' : ''}`),
    runs: async (id, limit) => (await call<{ runs: RunView[] }>('GET', `/sources/${id}/runs?limit=${limit}`)).runs,
    run: (id, runId) => call('GET', `/sources/${id}/runs/${runId}`),
    remove: async (id, deleteDocuments) => {
      await call('DELETE', `/sources/${id}${deleteDocuments ? '?delete_documents=true' : ''}`);
    },
  };
}
