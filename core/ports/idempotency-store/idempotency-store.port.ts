/**
 * The idempotency store: what each `Idempotency-Key` of a client was used for, and the answer its
 * write got, so that a client that lost an answer can send the request again and get that answer
 * instead of a second write. Times are epoch milliseconds, given by the caller.
 */

/** What a write answered, kept to answer a retry with it. */
export interface StoredResponse {
  readonly status: number;
  /** Headers to send again (lower-case names: the content type, a location). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as sent, as text; empty for none. */
  readonly body: string;
}

export type IdempotencyState = 'in-progress' | 'completed';

/** One key of one client. */
export interface IdempotencyRecord {
  /** Whose key it is (a workspace and the API key or account acting in it): keys of two scopes never meet. */
  readonly scope: string;
  /** The client's key, as sent (at most 255 characters). */
  readonly key: string;
  /** What the request was (method, path, a hash of its body): the same key may only replay the same request. */
  readonly fingerprint: string;
  /** Who holds an `in-progress` claim: a value unique to the claim, chosen by the claimer. */
  readonly token: string;
  readonly state: IdempotencyState;
  readonly createdAtMs: number;
  /**
   * `in-progress`: when the claim lapses (its holder is presumed gone and another request may
   * take the key over). `completed`: when the answer is forgotten.
   */
  readonly expiresAtMs: number;
  /** The answer, once `completed`; null while `in-progress`. */
  readonly response: StoredResponse | null;
}

export interface ClaimRequest {
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly token: string;
  readonly nowMs: number;
  /** When this claim lapses if it is neither completed nor released. */
  readonly expiresAtMs: number;
}

/**
 * The outcome of a claim: the key is the caller's now (with the expired record the claim replaced,
 * if any), or it is held (or answered) already.
 */
export type ClaimOutcome =
  | { readonly claimed: true; readonly record: IdempotencyRecord; readonly replaced: IdempotencyRecord | null }
  | { readonly claimed: false; readonly record: IdempotencyRecord };

/**
 * Idempotency keys of one deployment (every scope), shared by every API process.
 *
 * Contract:
 * - A record is **live** while `expiresAtMs > nowMs`; an expired record counts as absent for
 *   `claim` and `lookup`, whatever its state.
 * - `claim` is atomic across every process sharing the store: when the key of the scope has no
 *   live record it stores a new `in-progress` record with the request's fingerprint, token and
 *   expiry and answers `claimed: true` with it and `replaced`: the expired record it replaced, as
 *   it was (an `in-progress` one is a claim that lapsed or was released without an answer), or
 *   null when the key had no record; otherwise it
 *   changes nothing and answers `claimed: false` with the live record, whatever its fingerprint
 *   (comparing fingerprints is the caller's decision). Of any number of simultaneous claims of one
 *   key, from any processes, exactly one answers `claimed: true`.
 * - `complete` turns the `in-progress` record held by `token` into `completed` with the response
 *   and the new expiry, and answers true; it answers false and changes nothing when the record is
 *   gone, completed, or held by another token (the claim lapsed, or was released, and was taken
 *   over).
 * - `release` ends the live `in-progress` claim held by `token` without an answer: the record
 *   stays, lapsed at `nowMs` (`expiresAtMs` becomes `nowMs`, so the key is free at once and the
 *   next claim answers it as `replaced`), and answers true; false, changing nothing, for a record
 *   that is gone, completed, lapsed already, or held by another token.
 * - `renew` moves the expiry of the live `in-progress` claim held by `token` to `expiresAtMs` (its
 *   holder still runs) and answers true; false, changing nothing, for a record that is gone,
 *   completed, lapsed at `nowMs`, or held by another token.
 * - `lookup` returns the live record of the key, or null.
 * - `sweep` removes every record that expired at or before `nowMs` and answers how many it
 *   removed; a record claimed, completed or taken over again meanwhile is kept.
 * - Scopes and keys are compared exactly (case and every character count); a key is found only
 *   in its own scope.
 * - Writes are durable when the call resolves: a new process (or one restarted) sharing the store
 *   sees them.
 *
 * Outside the contract: when expired records are removed if `sweep` is never called, and how long
 * a stored response may be (responses are the API's JSON answers: kilobytes).
 */
export interface IdempotencyStore {
  readonly kind: string;
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  complete(scope: string, key: string, token: string, response: StoredResponse, expiresAtMs: number): Promise<boolean>;
  release(scope: string, key: string, token: string, nowMs: number): Promise<boolean>;
  renew(scope: string, key: string, token: string, nowMs: number, expiresAtMs: number): Promise<boolean>;
  lookup(scope: string, key: string, nowMs: number): Promise<IdempotencyRecord | null>;
  sweep(nowMs: number): Promise<number>;
  close(): Promise<void>;
}
