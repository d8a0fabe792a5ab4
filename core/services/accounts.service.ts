import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';
import { ROLES, type Role, type UserRecord } from '../model/account-records.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import { unsafeCharacter } from '../util/display-text.ts';
import { isoNow } from '../util/time.ts';
import { generateApiKey } from './keys.service.ts';
import { hashPassword, verifyPassword } from './password-hash.ts';
import type { AccountsService, AccountView } from './services.ts';
import { createSignInFailures } from './sign-in-failures.ts';

const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/;
const WORKSPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MIN_PASSWORD_LENGTH = 12;
/** Emails whose wrong passwords are remembered at once (see sign-in-failures.ts). */
const MAX_TRACKED_EMAILS = 100_000;
/** Session tokens: 32 random bytes, base64url. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface AccountsServiceDeps {
  readonly accountStore: AccountStore;
  readonly sessionTtlSeconds: number;
  readonly maxFailedSignIns: number;
  readonly lockoutSeconds: number;
  /** Clock (tests). */
  readonly now?: () => number;
}

export function accountView(user: UserRecord): AccountView {
  return {
    id: user.id,
    email: user.email,
    role: user.role,
    workspaces: [...user.workspaceIds],
    created_at: user.createdAt,
  };
}

/** The stored id of a session token. */
export function sessionId(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A one-time password: 24 base62 characters (≈ 143 bits). */
function generatePassword(): string {
  return generateApiKey().slice(4, 28);
}

/**
 * Dashboard accounts and sessions. Passwords are scrypt hashes; a session token is 32 random
 * bytes of which only the SHA-256 is stored. A password the service generates (an account created
 * without one of the person's own, a reset) is marked `passwordGenerated` until the person
 * changes it. Wrong passwords — at sign-in, and the current
 * password when changing it — are counted per email in this process (an unknown email is counted
 * like a known one, and costs a hash too, so neither the answer nor its time tells whether an
 * account exists).
 */
export function createAccountsService(deps: AccountsServiceDeps): AccountsService {
  const now = deps.now ?? Date.now;
  const failures = createSignInFailures({
    maxFailures: deps.maxFailedSignIns,
    lockoutMs: deps.lockoutSeconds * 1000,
    maxTracked: MAX_TRACKED_EMAILS,
    now,
  });
  let dummyHash: Promise<string> | undefined;

  const refuseWhileLocked = (email: string) => {
    const locked = failures.lockedFor(email);
    if (locked > 0) {
      throw new KbError(
        'rate-limit-exceeded',
        `Too many wrong passwords for this account; signing in and changing the password are locked for ${locked} s.`,
        { retryAfter: locked },
      );
    }
  };

  return {
    async create({ email, workspaceIds, role, password: chosen }) {
      const normalized = email.trim().toLowerCase();
      if (!EMAIL_PATTERN.test(normalized) || unsafeCharacter(normalized) !== undefined) {
        throw new KbError('validation-error', `"${email}" is not an email address.`);
      }
      const workspaces = [...new Set(workspaceIds.map((w) => w.trim()).filter(Boolean))];
      if (workspaces.length === 0 || workspaces.some((w) => !WORKSPACE_PATTERN.test(w))) {
        throw new KbError(
          'validation-error',
          'An account needs at least one workspace; a workspace id is 1–64 letters, digits, `_` or `-`.',
        );
      }
      if (!ROLES.includes(role)) throw new KbError('validation-error', `The role must be one of ${ROLES.join(', ')}.`);
      if (chosen !== undefined && [...chosen].length < MIN_PASSWORD_LENGTH) {
        throw new KbError('validation-error', `The password must be at least ${MIN_PASSWORD_LENGTH} characters.`, {
          errors: [{ field: 'password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }],
        });
      }
      const password = chosen ?? generatePassword();
      const user: UserRecord = {
        id: randomUUID(),
        email: normalized,
        passwordHash: await hashPassword(password),
        role: role as Role,
        workspaceIds: workspaces,
        createdAt: isoNow(),
        passwordGenerated: chosen === undefined,
      };
      await deps.accountStore.createUser(user);
      return { account: accountView(user), password };
    },

    async resetPassword(email) {
      const user = await deps.accountStore.findUserByEmail(email.trim().toLowerCase());
      if (!user) throw new KbError('not-found', `No account with the email ${email.trim()}.`);
      const password = generatePassword();
      const at = isoNow();
      await deps.accountStore.setPassword(user.id, await hashPassword(password), at, true);
      await deps.accountStore.revokeUserSessions(user.id, at);
      // A person locked out by wrong guesses can sign in with the new password at once.
      failures.clear(user.email);
      return { account: accountView(user), password };
    },

    async list() {
      return (await deps.accountStore.listUsers()).map(accountView);
    },

    count() {
      return deps.accountStore.countUsers();
    },

    async signIn(email, password) {
      const normalized = email.trim().toLowerCase();
      refuseWhileLocked(normalized);
      const user = await deps.accountStore.findUserByEmail(normalized);
      dummyHash ??= hashPassword(randomUUID());
      const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
      if (!user || !ok) {
        failures.record(normalized);
        throw new KbError('unauthorized', 'Wrong email or password.');
      }
      failures.clear(normalized);
      const token = randomBytes(32).toString('base64url');
      const createdMs = now();
      const session = {
        id: sessionId(token),
        userId: user.id,
        csrfToken: randomBytes(24).toString('base64url'),
        createdAt: new Date(createdMs).toISOString(),
        expiresAt: new Date(createdMs + deps.sessionTtlSeconds * 1000).toISOString(),
        revokedAt: null,
      };
      await deps.accountStore.createSession(session);
      return { token, session, user };
    },

    async authenticate(token) {
      if (!TOKEN_PATTERN.test(token)) return null;
      const session = await deps.accountStore.getSession(sessionId(token));
      if (!session || session.revokedAt !== null || Date.parse(session.expiresAt) <= now()) return null;
      const user = await deps.accountStore.getUser(session.userId);
      return user ? { session, user } : null;
    },

    async changePassword({ userId, sessionId, current, next }) {
      const user = await deps.accountStore.getUser(userId);
      if (!user) throw new KbError('unauthorized', 'This account no longer exists.');
      // A wrong current password counts with the wrong passwords of sign-in, and the lockout holds here too.
      refuseWhileLocked(user.email);
      const errors = [];
      if (!(await verifyPassword(current, user.passwordHash))) {
        failures.record(user.email);
        errors.push({ field: 'current_password', message: 'is not the current password' });
      }
      if ([...next].length < MIN_PASSWORD_LENGTH) {
        errors.push({ field: 'new_password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` });
      } else if (next === current) {
        errors.push({ field: 'new_password', message: 'must differ from the current password' });
      }
      if (errors.length > 0) {
        throw new KbError('validation-error', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
      }
      const at = isoNow();
      // A password the person chose: the mark of a generated one is cleared.
      await deps.accountStore.setPassword(userId, await hashPassword(next), at, false);
      await deps.accountStore.revokeUserSessions(userId, at, sessionId);
    },

    async signOut(token) {
      if (!TOKEN_PATTERN.test(token)) return;
      await deps.accountStore.revokeSession(sessionId(token), isoNow());
    },
  };
}
