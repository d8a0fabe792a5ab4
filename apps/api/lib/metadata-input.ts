/**
 * The one place that validates document metadata from a client and takes `change_reason` out of
 * it, shared by upload (POST), replace (PUT) and metadata patch (PATCH).
 *
 * Rules (README, "Formats, limits and hostile input"): metadata is a JSON object with at most 64 keys
 * as sent (a `change_reason` key counts, as the OpenAPI document's `maxProperties` says), each key
 * at most 128 characters, at most 16 KiB serialised (UTF-8). A `change_reason` key is not metadata:
 * it is removed from the object and stored on the version and the audit entry; the explicit
 * `change_reason` field (form field or JSON member) wins over the key when both are sent. The key
 * length and size limits apply to the metadata that is stored, i.e. after `change_reason` is removed.
 */
import { type FieldError, KbError } from '../../../core/errors/kb-error.ts';
import type { Metadata } from '../../../core/model/document-records.model.ts';

export const METADATA_LIMITS = {
  maxKeys: 64,
  maxKeyLength: 128,
  maxBytes: 16 * 1024,
  maxChangeReasonLength: 2000,
  /** Objects and arrays nested inside one another, the metadata object itself being level 1. */
  maxDepth: 32,
} as const;

/**
 * Nesting depth of JSON text (objects and arrays, strings skipped), found without parsing so that
 * text nested thousands of levels deep is refused before any recursive code sees it.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return max;
}

/** Nesting depth of a parsed JSON value (objects and arrays), without recursion. */
export function jsonValueDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, level] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    max = Math.max(max, level);
    if (level > METADATA_LIMITS.maxDepth) break;
    for (const child of Object.values(current)) stack.push([child, level + 1]);
  }
  return max;
}

const tooDeep = (depth: number) => ({
  field: 'metadata',
  message: `is nested ${depth > METADATA_LIMITS.maxDepth + 1 ? 'more than ' : ''}${Math.min(depth, METADATA_LIMITS.maxDepth + 1)} levels deep; at most ${METADATA_LIMITS.maxDepth} are allowed`,
});

export interface MetadataInput {
  /** Undefined when no metadata was sent (PUT keeps the current metadata then). */
  readonly metadata: Metadata | undefined;
  readonly changeReason: string | null;
}

export interface RawMetadataInput {
  /** A JSON string (multipart field), an already parsed value (JSON body), or undefined if absent. */
  readonly metadata: unknown;
  /** The explicit `change_reason` field, if sent. */
  readonly changeReason?: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkChangeReason(value: unknown, field: string, errors: FieldError[]): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    errors.push({ field, message: 'must be a string' });
    return null;
  }
  // The limit applies to what was sent, as the JSON body schema of PATCH checks it, padding included.
  if ([...value].length > METADATA_LIMITS.maxChangeReasonLength) {
    errors.push({ field, message: `must be at most ${METADATA_LIMITS.maxChangeReasonLength} characters` });
    return null;
  }
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * Validates metadata and extracts the change reason. Throws `validation-error` (422) listing
 * every failed field.
 */
export function readMetadataInput(input: RawMetadataInput): MetadataInput {
  const errors: FieldError[] = [];
  let changeReason = checkChangeReason(input.changeReason, 'change_reason', errors);
  let metadata: Metadata | undefined;

  if (input.metadata !== undefined) {
    let value: unknown = input.metadata;
    if (typeof value === 'string') {
      const depth = jsonTextDepth(value);
      if (depth > METADATA_LIMITS.maxDepth) {
        errors.push(tooDeep(depth));
        value = undefined;
      } else {
        try {
          value = JSON.parse(value);
        } catch {
          errors.push({ field: 'metadata', message: 'must be a JSON object (the value is not valid JSON)' });
          value = undefined;
        }
      }
    } else if (value !== undefined && jsonValueDepth(value) > METADATA_LIMITS.maxDepth) {
      errors.push(tooDeep(jsonValueDepth(value)));
      value = undefined;
    }
    if (value !== undefined && !isPlainObject(value)) {
      const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
      errors.push({ field: 'metadata', message: `must be a JSON object, not ${got}` });
    } else if (isPlainObject(value)) {
      const entries = Object.entries(value);
      const own = entries.filter(([k]) => k !== 'change_reason');
      const fromKey = entries.find(([k]) => k === 'change_reason');
      if (fromKey) {
        const reason = checkChangeReason(fromKey[1], 'metadata.change_reason', errors);
        if (input.changeReason === undefined || input.changeReason === null) changeReason = reason;
      }
      if (entries.length > METADATA_LIMITS.maxKeys) {
        errors.push({
          field: 'metadata',
          message: `has ${entries.length} keys; at most ${METADATA_LIMITS.maxKeys} are allowed${fromKey ? ' (a change_reason key counts)' : ''}`,
        });
      }
      const longKeys = own.map(([k]) => k).filter((k) => [...k].length > METADATA_LIMITS.maxKeyLength);
      for (const key of longKeys.slice(0, 5)) {
        errors.push({
          field: 'metadata',
          message: `key "${[...key].slice(0, 32).join('')}…" is ${[...key].length} characters; keys are at most ${METADATA_LIMITS.maxKeyLength}`,
        });
      }
      if (own.some(([k]) => k === '__proto__')) {
        errors.push({ field: 'metadata', message: 'key "__proto__" is not allowed' });
      }
      metadata = Object.fromEntries(own);
      const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
      if (bytes > METADATA_LIMITS.maxBytes) {
        errors.push({
          field: 'metadata',
          message: `is ${bytes} bytes serialised; at most ${METADATA_LIMITS.maxBytes} (16 KiB) are allowed`,
        });
      }
    }
  }

  if (errors.length > 0) {
    throw new KbError('validation-error', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
  }
  return { metadata, changeReason };
}
