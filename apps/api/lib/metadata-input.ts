/**
 * The one place that validates metadata from a client: a document's, taking `change_reason` out
 * of it, shared by upload (POST), replace (PUT) and metadata patch (PATCH), and a source's (the
 * metadata its sync gives every document), by the same rule.
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

const tooDeep = (field: string, depth: number) => ({
  field,
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
 * The metadata rule, shared by documents (upload, replace, PATCH) and sources (create, PATCH): a
 * JSON object (a JSON string is parsed first, once its text is known not to nest too deep), nested
 * at most {@link METADATA_LIMITS.maxDepth} levels, at most `maxKeys` keys as sent, each key at most
 * `maxKeyLength` characters, no `__proto__` key, at most `maxBytes` serialised. `changeReasonKey`
 * (documents): a `change_reason` key is taken out (it counts among the keys as sent; the key and
 * size limits apply to what is left) and returned apart. Every failure is pushed to `errors`
 * under `field`; the metadata is returned only when it is an object.
 */
export function checkMetadata(
  input: unknown,
  errors: FieldError[],
  options: { readonly field?: string; readonly changeReasonKey?: boolean } = {},
): { metadata: Metadata | undefined; changeReason: { value: unknown } | undefined } {
  const field = options.field ?? 'metadata';
  let value: unknown = input;
  if (typeof value === 'string') {
    const depth = jsonTextDepth(value);
    if (depth > METADATA_LIMITS.maxDepth) {
      errors.push(tooDeep(field, depth));
      return { metadata: undefined, changeReason: undefined };
    }
    try {
      value = JSON.parse(value);
    } catch {
      errors.push({ field, message: 'must be a JSON object (the value is not valid JSON)' });
      return { metadata: undefined, changeReason: undefined };
    }
  } else {
    const depth = jsonValueDepth(value);
    if (depth > METADATA_LIMITS.maxDepth) {
      errors.push(tooDeep(field, depth));
      return { metadata: undefined, changeReason: undefined };
    }
  }
  if (!isPlainObject(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    errors.push({ field, message: `must be a JSON object, not ${got}` });
    return { metadata: undefined, changeReason: undefined };
  }
  const entries = Object.entries(value);
  const splitReason = options.changeReasonKey === true;
  const own = splitReason ? entries.filter(([k]) => k !== 'change_reason') : entries;
  const fromKey = splitReason ? entries.find(([k]) => k === 'change_reason') : undefined;
  if (entries.length > METADATA_LIMITS.maxKeys) {
    errors.push({
      field,
      message: `has ${entries.length} keys; at most ${METADATA_LIMITS.maxKeys} are allowed${fromKey ? ' (a change_reason key counts)' : ''}`,
    });
  }
  const longKeys = own.map(([k]) => k).filter((k) => [...k].length > METADATA_LIMITS.maxKeyLength);
  for (const key of longKeys.slice(0, 5)) {
    errors.push({
      field,
      message: `key "${[...key].slice(0, 32).join('')}…" is ${[...key].length} characters; keys are at most ${METADATA_LIMITS.maxKeyLength}`,
    });
  }
  if (own.some(([k]) => k === '__proto__')) {
    errors.push({ field, message: 'key "__proto__" is not allowed' });
  }
  const metadata = Object.fromEntries(own);
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > METADATA_LIMITS.maxBytes) {
    errors.push({
      field,
      message: `is ${bytes} bytes serialised; at most ${METADATA_LIMITS.maxBytes} (16 KiB) are allowed`,
    });
  }
  return { metadata, changeReason: fromKey ? { value: fromKey[1] } : undefined };
}

const failed = (errors: FieldError[]) =>
  new KbError('validation-error', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });

/**
 * Validates metadata and extracts the change reason. Throws `validation-error` (422) listing
 * every failed field.
 */
export function readMetadataInput(input: RawMetadataInput): MetadataInput {
  const errors: FieldError[] = [];
  let changeReason = checkChangeReason(input.changeReason, 'change_reason', errors);
  let metadata: Metadata | undefined;
  if (input.metadata !== undefined) {
    const checked = checkMetadata(input.metadata, errors, { changeReasonKey: true });
    metadata = checked.metadata;
    if (checked.changeReason) {
      const reason = checkChangeReason(checked.changeReason.value, 'metadata.change_reason', errors);
      if (input.changeReason === undefined || input.changeReason === null) changeReason = reason;
    }
  }
  if (errors.length > 0) throw failed(errors);
  return { metadata, changeReason };
}

/** Source metadata, by the same rule as a document's (a `change_reason` key is just a key). Throws 422. */
export function readSourceMetadata(input: unknown): Metadata {
  const errors: FieldError[] = [];
  const { metadata } = checkMetadata(input, errors);
  if (errors.length > 0 || metadata === undefined) throw failed(errors);
  return metadata;
}
