/**
 * The one list of network failure codes that mean "the other side could not be reached or did
 * not answer in time, retry later": refused, reset or timed-out connections, broken pipes, DNS
 * lookups that failed for now, unreachable hosts, and undici's closed sockets.
 */
export const TRANSIENT_NETWORK_CODES: readonly string[] = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
];

/** Whether `code` (an error's `code` property) is a transient network failure. */
export function isTransientNetworkCode(code: unknown): boolean {
  return typeof code === 'string' && TRANSIENT_NETWORK_CODES.includes(code);
}
