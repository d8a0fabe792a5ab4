/**
 * The JSON body parser: plain `JSON.parse`, then a refusal of keys that would reach an object's
 * prototype (`__proto__`, `constructor.prototype`) with a message that names the key, instead of
 * the generic "not valid JSON" of the framework's parser.
 */
import type { FastifyRequest } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';

/**
 * The first prototype-reaching key of a parsed JSON value (`__proto__`, `constructor.prototype`),
 * or null. Walked without recursion, so a body nested thousands of levels deep cannot exhaust the
 * stack (a `JSON.parse` reviver would).
 */
function prototypeKey(text: string, value: unknown): string | null {
  if (!text.includes('__proto__') && !text.includes('prototype')) return null;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== 'object') continue;
    for (const [key, child] of Object.entries(current)) {
      if (key === '__proto__') return '__proto__';
      if (key === 'constructor' && child && typeof child === 'object' && Object.hasOwn(child, 'prototype')) {
        return 'constructor.prototype';
      }
      pending.push(child);
    }
  }
  return null;
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
  const key = prototypeKey(body, value);
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
