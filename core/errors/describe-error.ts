/**
 * One line that says why something failed, whatever was thrown: the message of the error and of
 * each `cause` below it, and, where a message is empty (Node's `AggregateError` of a connection
 * tried on several addresses, an HTTP client error for an answer without a body), the error's
 * name, `code`, HTTP `status` and the errors it aggregates. Never empty.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== undefined && current !== null && !seen.has(current) && parts.length < 8) {
    seen.add(current);
    const own = describeOne(current);
    if (own && !parts.some((part) => part.includes(own))) parts.push(own);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.length > 0 ? parts.join(': ') : 'failed without saying why (an empty error was thrown)';
}

function describeOne(error: unknown): string {
  if (typeof error !== 'object') return safeString(error);
  const e = error as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    status?: unknown;
    statusCode?: unknown;
    meta?: { statusCode?: unknown };
    errors?: unknown;
  };
  const message = typeof e.message === 'string' ? e.message.trim() : '';
  const facts: string[] = [];
  const kbError = e.name === 'KbError';
  if (!kbError && (typeof e.code === 'string' || typeof e.code === 'number')) facts.push(`code ${e.code}`);
  const status = [e.status, e.statusCode, e.meta?.statusCode].find((s) => typeof s === 'number');
  if (status !== undefined && !message.includes(`HTTP status ${status}`)) facts.push(`HTTP status ${status}`);
  if (Array.isArray(e.errors) && e.errors.length > 0) {
    facts.push(
      e.errors
        .slice(0, 4)
        .map((inner) => describeOne(inner) || 'unknown')
        .join('; '),
    );
  }
  if (message)
    return facts.length > 0 && !message.includes(String(e.code)) ? `${message} (${facts.join(', ')})` : message;
  const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name : '';
  if (facts.length === 0) return name;
  return `${name || 'error'} (${facts.join(', ')})`;
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
