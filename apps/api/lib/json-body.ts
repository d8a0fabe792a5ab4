/**
 * The JSON body parser: plain `JSON.parse`, then a refusal of keys that would reach an object's
 * prototype (`__proto__`, `constructor.prototype`) with a message that names the key, instead of
 * the generic "not valid JSON" of the framework's parser.
 */
import type { FastifyRequest } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';

/** The first prototype-reaching key of a parsed JSON value, as a dotted path, or null. */
function prototypeKey(text: string): string | null {
  if (!text.includes('__proto__') && !text.includes('prototype')) return null;
  let found: string | null = null;
  JSON.parse(text, function (this: Record<string, unknown>, key, value) {
    if (found) return value;
    if (key === '__proto__') found = '__proto__';
    else if (key === 'constructor' && value && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
      found = 'constructor.prototype';
    }
    return value;
  });
  return found;
}

export function parseJsonBody(
  _request: FastifyRequest,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
) {
  if (body.length === 0) {
    done(new KbError('bad-request', 'The body is empty but Content-Type is application/json.'));
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    done(new KbError('bad-request', 'The body is not valid JSON.'));
    return;
  }
  const key = prototypeKey(body);
  if (key) {
    done(
      new KbError(
        'validation-error',
        `The body holds a "${key}" key, which is refused at any depth (it could alter shared objects); rename it.`,
        { errors: [{ field: key, message: 'is a reserved key and not allowed' }] },
      ),
    );
    return;
  }
  done(null, value);
}
