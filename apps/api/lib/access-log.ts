/**
 * The access log: one line per answered request (`request completed`, with the request; the
 * `incoming request` line is at debug level). So that a flood cannot fill the disk through the log,
 * 4xx answers are throttled: a key's rate-limit refusals are logged once per minute (the first at
 * once, then the count of the rest when the minute is over), other 4xx answers are sampled (the
 * first few of each status a minute, then the count of the rest). Refusals are also counted in the
 * metrics (`kb_rate_limit_rejections_total`).
 */
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { createLogThrottle } from './log-throttle.ts';

/** What the request's handling learnt that its access line should carry. */
interface AccessNote {
  key?: { readonly id: string; readonly workspaceId: string; readonly plan: string };
  problem?: { readonly kind: string; readonly detail: string };
}

const notes = new WeakMap<FastifyRequest, AccessNote>();

function note(request: FastifyRequest): AccessNote {
  let found = notes.get(request);
  if (found === undefined) {
    found = {};
    notes.set(request, found);
  }
  return found;
}

/** The API key the request presented (known before the rate limit is checked). */
export function noteKey(request: FastifyRequest, key: { id: string; workspaceId: string; plan: string }): void {
  note(request).key = { id: key.id, workspaceId: key.workspaceId, plan: key.plan };
}

/** The problem a 4xx answer carries, for its access line. */
export function noteProblem(request: FastifyRequest, problem: { kind: string; detail: string }): void {
  note(request).problem = { kind: problem.kind, detail: problem.detail };
}

/** The window of the throttles: refusals of one key are logged at most once in it. */
export const ACCESS_LOG_WINDOW_MS = 60_000;
/** Lines of one 4xx status (other than 429) written in full per window. */
export const CLIENT_ERRORS_PER_WINDOW = 5;

export class AccessLogController extends LogController {
  readonly #refusals = createLogThrottle({ windowMs: ACCESS_LOG_WINDOW_MS, perWindow: 1, maxGroups: 10_000 });
  readonly #clientErrors = createLogThrottle({
    windowMs: ACCESS_LOG_WINDOW_MS,
    perWindow: CLIENT_ERRORS_PER_WINDOW,
    maxGroups: 1_000,
  });
  #timer: NodeJS.Timeout | undefined;

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) {
      reply.log.error({ ...line, err: error }, 'request errored');
      return;
    }
    const status = reply.statusCode;
    if (status < 400 || status >= 500) {
      reply.log.info(line, 'request completed');
      return;
    }
    const { key, problem } = notes.get(request) ?? {};
    const about = {
      ...line,
      status,
      ...(key ? { key_id: key.id, workspace_id: key.workspaceId, plan: key.plan } : {}),
      ...(problem ? { kind: problem.kind } : {}),
    };
    if (status === 429 && key) {
      if (this.#refusals.admit(key.id)) {
        reply.log.info(
          about,
          `Rate limit exceeded for key ${key.id}; its further refusals are counted and logged once a minute.`,
        );
      }
      return;
    }
    if (this.#clientErrors.admit(String(status))) reply.log.info(about, problem?.detail ?? 'request completed');
  }

  /** Writes, about once a second, the counts of the lines the throttles held back in windows now over. */
  start(log: FastifyBaseLogger): void {
    this.stop();
    this.#timer = setInterval(() => this.flush(log), 1000);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  flush(log: FastifyBaseLogger): void {
    const seconds = ACCESS_LOG_WINDOW_MS / 1000;
    for (const { group, unlogged } of this.#refusals.due()) {
      log.info(
        { key_id: group, status: 429, unlogged, window_s: seconds },
        `The rate limit refused ${unlogged} more requests of key ${group} in the last ${seconds} s.`,
      );
    }
    for (const { group, unlogged } of this.#clientErrors.due()) {
      log.info(
        { status: Number(group), unlogged, window_s: seconds },
        `${unlogged} more ${group} answers were not logged in the last ${seconds} s.`,
      );
    }
  }
}
