import { KbError } from '../errors/kb-error.ts';
import { createDocumentBuilder, DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './document-builder.ts';
import { jsonShape } from './json-scan.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { decodeText } from './text-decode.ts';

export interface JsonLimits extends OutputLimits {
  /** Deepest array/object nesting accepted at all; deeper files fail before parsing. */
  readonly maxNesting: number;
  /** Nesting down to which every leaf gets its own block; deeper subtrees become one block each. */
  readonly blockDepth: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { ...DEFAULT_OUTPUT_LIMITS, maxNesting: 256, blockDepth: 64 };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends an object key to a JSON path: `.name` for identifiers, `["a key"]` otherwise. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function renderLeaf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return '[]';
  if (value !== null && typeof value === 'object') return '{}';
  return JSON.stringify(value);
}

interface Frame {
  readonly value: unknown;
  readonly path: string;
  readonly parent: string;
  readonly depth: number;
}

/**
 * JSON, path-aware: every leaf becomes a `field` block `path: value` (e.g. `$.users[0].name: Alice`;
 * strings unquoted, other scalars as JSON, empty containers as `{}`/`[]`), `section` being the path of
 * the enclosing container. Subtrees below `blockDepth` become one block with compact JSON. Nesting
 * and the value count are measured with a scan before `JSON.parse`; nesting deeper than
 * `maxNesting` or more values than `maxBlocks` fail fast with `content-too-large`. Invalid JSON is
 * `corrupt-file`. The walk is iterative (no recursion).
 */
export function parseJson(bytes: Uint8Array, limits: JsonLimits = DEFAULT_JSON_LIMITS): ParsedDocument {
  const text = decodeText(bytes);
  // Both checks run before JSON.parse: deep nesting would overflow the recursive steps after it,
  // and a huge value count would make JSON.parse itself allocate past the heap limit at once.
  const shape = jsonShape(text, limits.maxNesting, limits.maxBlocks);
  if (shape.depth > limits.maxNesting) {
    throw new KbError('content-too-large', `The JSON is nested deeper than the limit of ${limits.maxNesting} levels.`);
  }
  if (shape.values > limits.maxBlocks) {
    throw new KbError('content-too-large', `The JSON has more than ${limits.maxBlocks} values.`);
  }
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw new KbError('corrupt-file', `The file is not valid JSON: ${(error as Error).message}`);
  }

  const builder = createDocumentBuilder(limits);
  const stack: Frame[] = [{ value: root, path: '$', parent: '$', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, parent, depth: level } = stack.pop() as Frame;
    const isContainer = value !== null && typeof value === 'object';
    const empty = isContainer && (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0);
    if (!isContainer || empty) {
      builder.block('field', `${path}: ${renderLeaf(value)}`, { section: parent }, '\n');
      continue;
    }
    if (level >= limits.blockDepth) {
      builder.block('field', `${path}: ${JSON.stringify(value)}`, { section: parent }, '\n');
      continue;
    }
    const size = Array.isArray(value) ? value.length : Object.keys(value).length;
    if (builder.blockCount + stack.length + size > limits.maxBlocks) {
      throw new KbError('content-too-large', `The JSON has more than ${limits.maxBlocks} fields.`);
    }
    const children: Frame[] = Array.isArray(value)
      ? value.map((v, i) => ({ value: v, path: childPath(path, i), parent: path, depth: level + 1 }))
      : Object.entries(value as Record<string, unknown>).map(([k, v]) => ({
          value: v,
          path: childPath(path, k),
          parent: path,
          depth: level + 1,
        }));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Frame);
  }
  return builder.build();
}
