/** How CLI commands that talk HTTP reach the service, and what they say in one line when they cannot. */

/** Why a request to the service could not be made, in words (connection refused, unknown host, …). */
export function networkProblem(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const code = cause?.code ?? (error as { code?: string } | null)?.code;
  if ((error as Error | null)?.name === 'TimeoutError') return 'no answer within the time limit';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return cause?.message ?? (error instanceof Error ? error.message : String(error));
  }
}

/**
 * Checks that `base` answers as this service (`GET /health/live`). Resolves null when it does,
 * else one line saying what is wrong and what to change.
 */
export async function checkService(base: string, timeoutMs = 5000): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return `cannot reach the service at ${base} (${networkProblem(error)}); is it running? Set --url or KB_API_URL.`;
  }
  const body = (await response.json().catch(() => null)) as { service?: unknown } | null;
  if (!response.ok || body?.service !== 'kb-document-service') {
    return `${base} does not answer as kb-document-service (GET /health/live: ${response.status}); check --url or KB_API_URL.`;
  }
  return null;
}
