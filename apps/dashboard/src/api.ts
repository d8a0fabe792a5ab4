/** The dashboard's one way to the service: same-origin requests with the session cookie. */

export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly errors?: readonly { field: string; message: string }[];
  /** On 401, 403 and 429: `code` tells e.g. `password_change_required` from other refusals. */
  readonly error?: { readonly code?: string };
}

/** A failed request, with the problem's `detail` as the message a person reads. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem | null;
  constructor(status: number, problem: Problem | null, fallback: string) {
    const fields = problem?.errors?.map((e) => `${e.field} ${e.message}`).join('; ');
    super(problem?.detail || fields || problem?.title || fallback);
    this.status = status;
    this.problem = problem;
  }
}

const session = { csrf: '', workspace: '' };
const signedOutListeners = new Set<() => void>();
const passwordChangeListeners = new Set<() => void>();

export function useSession(csrf: string, workspace: string): void {
  session.csrf = csrf;
  session.workspace = workspace;
}

export function currentWorkspace(): string {
  return session.workspace;
}

/** Called when any request finds the session gone (401), so the app can show the sign-in form. */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/**
 * Called when a request is refused because the account must first replace the password the
 * service generated (403 `password_change_required`), so the app can show the change form.
 */
export function onPasswordChangeRequired(listener: () => void): () => void {
  passwordChangeListeners.add(listener);
  return () => passwordChangeListeners.delete(listener);
}

/** Tells the listeners what a refused request's problem means for the whole app (signed out, password to change). */
function announce(status: number, problem: Problem | null, path: string): void {
  if (status === 401 && !path.endsWith('/dashboard/api/session')) for (const l of signedOutListeners) l();
  if (status === 403 && problem?.error?.code === 'password_change_required')
    for (const l of passwordChangeListeners) l();
}

function headers(method: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (json) h['content-type'] = 'application/json';
  if (session.workspace) h['x-kb-workspace'] = session.workspace;
  if (!['GET', 'HEAD'].includes(method) && session.csrf) h['x-csrf-token'] = session.csrf;
  return h;
}

async function problemOf(res: Response): Promise<Problem | null> {
  try {
    return (await res.json()) as Problem;
  } catch {
    return null;
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const isForm = body instanceof FormData;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: headers(method, body !== undefined && !isForm),
      ...(body === undefined ? {} : { body: isForm ? body : JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, null, 'The service did not answer. Is it running?');
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    announce(res.status, problem, path);
    throw new ApiError(res.status, problem, `${res.status} ${res.statusText}`);
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A multipart upload that reports progress (fetch cannot): POST a new document or PUT a new version. */
export function uploadWithProgress<T>(
  method: 'POST' | 'PUT',
  path: string,
  form: FormData,
  onProgress: (fraction: number) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    for (const [name, value] of Object.entries(headers(method, false))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, null, 'The upload was interrupted.'));
    xhr.onload = () => {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(xhr.responseText);
      } catch {
        parsed = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(parsed as T);
      } else {
        announce(xhr.status, parsed as Problem | null, path);
        reject(new ApiError(xhr.status, parsed as Problem | null, `${xhr.status} ${xhr.statusText}`));
      }
    };
    xhr.send(form);
  });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
