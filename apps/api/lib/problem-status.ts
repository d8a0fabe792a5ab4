/**
 * The HTTP status of each problem kind: the pipeline's errors name a kind (see the error
 * catalogue), the API decides what status answers it.
 */
import { catalogueEntry, type ErrorCode, type ProblemKind } from '../../../core/errors/error-catalogue.ts';

export const PROBLEM_STATUS: Readonly<Record<ProblemKind, number>> = {
  'bad-request': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  'payload-too-large': 413,
  'validation-error': 422,
  'rate-limit-exceeded': 429,
  'internal-error': 500,
  'service-unavailable': 503,
  'insufficient-storage': 507,
};

/** The status, kind and title an error code is answered with. */
export function problemOf(code: ErrorCode): { status: number; kind: ProblemKind; title: string } {
  const { kind, title } = catalogueEntry(code);
  return { status: PROBLEM_STATUS[kind], kind, title };
}
