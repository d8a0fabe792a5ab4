/**
 * Errors Node's HTTP parser raises before a request reaches routing (bad framing, headers or URL
 * too large, a request body that did not arrive in time) answered like every other error: an
 * `application/problem+json` body with a fresh `X-Request-Id` repeated as `trace_id`.
 */
import type { Socket } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import { catalogueEntry, type ProblemKind } from '../../../core/errors/error-catalogue.ts';

interface ClientFault {
  readonly status: number;
  readonly reason: string;
  readonly kind: ProblemKind;
  readonly detail: string;
}

function faultOf(error: NodeJS.ErrnoException, requestTimeoutMs: number, maxHeaderBytes: number): ClientFault {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      reason: 'Request Timeout',
      kind: 'bad-request',
      detail: `The request was not received completely within ${requestTimeoutMs} ms; send it again, faster.`,
    };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      kind: 'bad-request',
      detail: `The request line and headers together exceed ${maxHeaderBytes / 1024} KiB (a very long URL counts too).`,
    };
  }
  return {
    status: 400,
    reason: 'Bad Request',
    kind: 'bad-request',
    detail: `The request is not well-formed HTTP/1.1 (${error.code ?? 'parse error'}).`,
  };
}

/** Fastify `clientErrorHandler`: writes the problem and closes the connection. */
export function createClientErrorHandler(
  problemBaseUrl: string | null,
  requestTimeoutMs: number,
  maxHeaderBytes: number,
) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const fault = faultOf(error, requestTimeoutMs, maxHeaderBytes);
    const traceId = uuidv7();
    const body = JSON.stringify({
      type: `${problemBaseUrl ?? ''}/errors/${fault.kind}`,
      title: fault.status === 400 ? catalogueEntry('bad-request').title : fault.reason,
      status: fault.status,
      detail: fault.detail,
      instance: '/',
      trace_id: traceId,
      timestamp: new Date().toISOString(),
    });
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${fault.status} ${fault.reason}\r\n` +
          'Content-Type: application/problem+json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${traceId}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(error);
  };
}
