import { KbError } from '../../errors/kb-error.ts';

/** One `/`-separated segment of an object key. */
export const OBJECT_KEY_SEGMENT = /^[A-Za-z0-9._-]+$/;
const PREFIX_CHARS = /^[A-Za-z0-9._/-]*$/;
export const MAX_OBJECT_KEY_LENGTH = 1024;

function badKey(key: string, why: string): KbError {
  return new KbError('bad-request', `Invalid object key ${JSON.stringify(key)}: ${why}`);
}

/**
 * Checks a key: `/`-separated segments of `[A-Za-z0-9._-]`, none empty, `.` or `..`, at most
 * {@link MAX_OBJECT_KEY_LENGTH} characters. Throws `bad-request` otherwise. Every object-store
 * adapter uses this one check, so a key valid for one is valid for all.
 */
export function validateObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw badKey(String(key), 'empty');
  if (key.length > MAX_OBJECT_KEY_LENGTH) {
    throw badKey(key.slice(0, 64), `longer than ${MAX_OBJECT_KEY_LENGTH} characters`);
  }
  if (key.startsWith('/')) throw badKey(key, 'absolute');
  for (const segment of key.split('/')) {
    if (segment === '') throw badKey(key, 'empty path segment');
    if (segment === '.' || segment === '..') throw badKey(key, 'relative path segment');
    if (!OBJECT_KEY_SEGMENT.test(segment)) {
      throw badKey(key, 'only letters, digits, ".", "_", "-" and "/" are allowed');
    }
  }
}

/**
 * Checks a listing or deletion prefix: a key's beginning, with the same characters, possibly
 * empty or ending in a partial segment. Throws `bad-request` otherwise.
 */
export function validateObjectKeyPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw badKey(String(prefix), 'not a string');
  if (prefix.length > MAX_OBJECT_KEY_LENGTH) {
    throw badKey(prefix.slice(0, 64), `longer than ${MAX_OBJECT_KEY_LENGTH} characters`);
  }
  if (prefix.startsWith('/')) throw badKey(prefix, 'absolute');
  if (!PREFIX_CHARS.test(prefix)) throw badKey(prefix, 'only letters, digits, ".", "_", "-" and "/" are allowed');
  const segments = prefix.split('/');
  for (const [i, segment] of segments.entries()) {
    if (segment === '..' || (segment === '.' && i < segments.length - 1)) throw badKey(prefix, 'relative path segment');
    if (segment === '' && i < segments.length - 1) throw badKey(prefix, 'empty path segment');
  }
}

/** Whether `key` passes {@link validateObjectKey}. */
export function isObjectKey(key: string): boolean {
  try {
    validateObjectKey(key);
    return true;
  } catch {
    return false;
  }
}
