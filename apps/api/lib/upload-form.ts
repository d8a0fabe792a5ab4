/**
 * Multipart upload handling shared by POST /documents and PUT /documents/:id.
 *
 * The `file` part is handed to upload staging as a stream the moment it arrives (never
 * buffered); text fields may come before or after it. Whatever fails after the file was staged —
 * a later part, a field check, metadata validation — the staged file is discarded; the document
 * write the route then makes discards it itself when it fails, so a failed upload leaves nothing
 * in storage.
 */
import type { FastifyRequest } from 'fastify';
import { type FieldError, KbError } from '../../../core/errors/kb-error.ts';
import { fingerprintOf } from '../../../core/services/idempotency.service.ts';
import type { StagedUpload, UploadStagingService } from '../../../core/services/upload-staging.service.ts';
import { unsafeCharacter } from '../../../core/util/display-text.ts';

/** Limits given to the multipart parser. The file itself is not capped here: the service counts it. */
export const MULTIPART_LIMITS = {
  fileSize: Number.POSITIVE_INFINITY,
  files: 1,
  fields: 8,
  parts: 10,
  fieldSize: 64 * 1024,
  fieldNameSize: 100,
  headerPairs: 50,
} as const;

export interface UploadTarget {
  readonly workspaceId: string;
  /** For PUT: the document the new content belongs to. */
  readonly documentId?: string;
}

/** Lets the rest of a request body flow to nowhere, so an early error never stalls the client. */
function drain(request: FastifyRequest): void {
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) return;
  raw.unpipe();
  raw.resume();
}

async function discard(uploads: UploadStagingService, staged: StagedUpload, request: FastifyRequest): Promise<void> {
  try {
    await uploads.discard(staged);
  } catch (err) {
    request.log.error({ err, storage_key: staged.storageKey }, 'could not discard a staged upload');
  }
}

/** A validation failure's field errors, or null for any other error. */
function fieldErrorsOf(error: unknown): readonly FieldError[] | null {
  return error instanceof KbError && error.code === 'validation-error' && error.errors ? error.errors : null;
}

/** A staged file and the form's text fields, as `readFields` read them. */
export interface UploadedFile<V> {
  readonly staged: StagedUpload;
  readonly fields: V;
  /**
   * What the form was, for an `Idempotency-Key`: the file's SHA-256 (computed while it streamed),
   * size, name and type, and the text fields as sent. The same form sent again (with any multipart
   * boundary, fields in any order) has the same fingerprint.
   */
  readonly fingerprint: string;
}

/**
 * Reads the multipart form, stages the file and reads the text fields with `readFields`. Field
 * problems (unknown, repeated or oversized fields, and what `readFields` reports) are answered
 * together as one 422. If anything throws, the staged file is discarded and the error rethrown;
 * once it returns, the staged file is the caller's to use (the document writes discard it when
 * they fail).
 *
 * @param allowedFields text fields the form may carry besides `file`; others → 422.
 */
export async function withUploadedFile<V>(
  request: FastifyRequest,
  uploads: UploadStagingService,
  target: UploadTarget,
  allowedFields: readonly string[],
  readFields: (fields: ReadonlyMap<string, unknown>) => V,
): Promise<UploadedFile<V>> {
  if (!request.isMultipart()) {
    const type = request.headers['content-type'] ?? 'none';
    throw new KbError(
      'bad-request',
      `The request must be multipart/form-data with the document in a \`file\` part (Content-Type was ${type}).`,
    );
  }

  const boundary = boundaryOf(request.headers['content-type']);
  if (boundary !== null && boundary.length > MAX_BOUNDARY_LENGTH) {
    drain(request);
    throw new KbError(
      'bad-request',
      `The multipart boundary is ${boundary.length} characters long; at most ${MAX_BOUNDARY_LENGTH} are allowed (RFC 2046).`,
    );
  }

  let staged: StagedUpload | undefined;
  const fields = new Map<string, unknown>();
  const problems: FieldError[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw new KbError(
            'bad-request',
            `Unexpected file part "${part.fieldname}": send the document in the \`file\` field.`,
          );
        }
        const nameProblem = fileNameProblem(part.filename);
        if (nameProblem) {
          part.file.resume();
          throw new KbError('validation-error', `file name ${nameProblem}`, {
            errors: [{ field: 'file', message: `name ${nameProblem}` }],
          });
        }
        staged = await uploads.stage({
          workspaceId: target.workspaceId,
          ...(target.documentId ? { documentId: target.documentId } : {}),
          stream: part.file,
          filename: part.filename,
          ...(part.mimetype ? { declaredType: part.mimetype } : {}),
          expectedBytes: Number(request.headers['content-length']) || 0,
        });
        continue;
      }
      const name = part.fieldname;
      if (!allowedFields.includes(name)) {
        problems.push({
          field: name,
          message: `is not an accepted form field (accepted: file, ${allowedFields.join(', ')})`,
        });
      } else if (fields.has(name)) {
        problems.push({ field: name, message: 'was sent more than once' });
      } else if (part.valueTruncated) {
        problems.push({ field: name, message: `is longer than ${MULTIPART_LIMITS.fieldSize} bytes` });
        fields.set(name, undefined);
      } else {
        fields.set(name, part.value);
      }
    }
    if (!staged) {
      throw new KbError(
        'missing-file',
        'The form has no `file` part: send the document in a multipart field named `file`.',
      );
    }
    let value: V | undefined;
    try {
      value = readFields(fields);
    } catch (error) {
      const errors = fieldErrorsOf(error);
      if (!errors) throw error;
      problems.push(...errors);
    }
    if (problems.length > 0 || value === undefined) {
      throw new KbError('validation-error', problems.map((p) => `${p.field} ${p.message}`).join('; '), {
        errors: problems,
      });
    }
    const file = { sha256: staged.contentHash, bytes: staged.sizeBytes, name: staged.name, type: staged.mimeType };
    return { staged, fields: value, fingerprint: fingerprintOf({ file, fields: Object.fromEntries(fields) }) };
  } catch (err) {
    if (staged) await discard(uploads, staged, request);
    drain(request);
    throw malformedBody(err) ?? err;
  }
}

/** Longest multipart boundary accepted: RFC 2046's limit (the parser fails on a few hundred). */
export const MAX_BOUNDARY_LENGTH = 70;

/** The `boundary` parameter of a Content-Type header (quoted or not), or null when there is none. */
function boundaryOf(contentType: string | undefined): string | null {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2] ?? '') : null;
}

/** The multipart parser's own complaints (busboy): a body that is not well-formed multipart. */
const MULTIPART_FAULT = /boundary|unexpected end of (form|file)|malformed|multipart/i;

/**
 * A 400 for an error the multipart parser raised (missing or wrong boundary, truncated body,
 * broken part headers), or null for any other error.
 */
function malformedBody(error: unknown): KbError | null {
  if (error instanceof KbError || !(error instanceof Error)) return null;
  if (typeof (error as { statusCode?: unknown }).statusCode === 'number') return null;
  if (!MULTIPART_FAULT.test(error.message)) return null;
  return new KbError(
    'bad-request',
    `The multipart body is malformed (${error.message}): send multipart/form-data with a boundary that matches the body, and the whole body.`,
    { cause: error },
  );
}

/** A form field as a trimmed string, or undefined when absent. */
export function stringField(fields: ReadonlyMap<string, unknown>, name: string): string | undefined {
  const value = fields.get(name);
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Longest accepted file name, in UTF-8 bytes. */
export const MAX_FILE_NAME_BYTES = 1024;

/** Why a file name is refused (too long, control characters or bidirectional overrides), or null. */
export function fileNameProblem(name: string | undefined): string | null {
  if (!name) return null;
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_FILE_NAME_BYTES) return `is ${bytes} bytes; at most ${MAX_FILE_NAME_BYTES} are allowed`;
  const found = unsafeCharacter(name);
  if (found !== undefined) {
    return `contains ${found}: control characters (such as line breaks or NUL) and bidirectional overrides are not allowed`;
  }
  return null;
}
