/** A person's browser, as far as the API can tell: a session cookie and the CSRF token. */
import type { ApiResponse } from './test-service.ts';

export interface DashboardClient {
  readonly cookie: string;
  readonly csrf: string;
  /** The raw sign-in response. */
  readonly signIn: ApiResponse<SignInBody>;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of any endpoint, narrowed by each test
  request<T = any>(
    method: string,
    pathname: string,
    options?: { json?: unknown; body?: RequestInit['body']; csrf?: string | null; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
}

export interface SignInBody {
  account: { id: string; email: string; role: string; workspaces: string[] };
  workspace: string;
  csrf_token: string;
  expires_at: string;
  /** The account signed in with a password the service generated and must choose its own first. */
  password_change_required: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of any endpoint, narrowed by each caller
export async function send<T = any>(url: string, method: string, init: RequestInit): Promise<ApiResponse<T>> {
  const res = await fetch(url, { method, redirect: 'manual', ...init });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    headers: res.headers,
    body: type.includes('json') && text ? JSON.parse(text) : text,
    text,
  };
}

export function postSignIn(baseUrl: string, email: string, password: string): Promise<ApiResponse<SignInBody>> {
  return send<SignInBody>(`${baseUrl}/dashboard/api/session`, 'POST', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

/** Signs in; throws unless the sign-in succeeds. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<DashboardClient> {
  const res = await postSignIn(baseUrl, email, password);
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${res.text}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  const csrf = res.body.csrf_token;
  return {
    cookie,
    csrf,
    signIn: res,
    request(method, pathname, options = {}) {
      const headers: Record<string, string> = { cookie, ...options.headers };
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (token !== null) headers['x-csrf-token'] = token;
      let body = options.body;
      if (options.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(options.json);
      }
      return send(`${baseUrl}${pathname}`, method, { headers, ...(body !== undefined ? { body } : {}) });
    },
  };
}
