import { KbError } from '../errors/kb-error.ts';

/** Opaque cursors: base64url JSON. Clients pass them back unchanged. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Decodes a cursor and checks its shape; a tampered or foreign cursor is a `bad-request`. */
export function decodeCursor<T>(cursor: string, check: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new KbError('bad-request', 'The cursor is not valid; pass `pagination.next_cursor` back unchanged.');
  }
  if (!check(value)) {
    throw new KbError('bad-request', 'The cursor is not valid; pass `pagination.next_cursor` back unchanged.');
  }
  return value;
}
