import { KbError } from '../../errors/kb-error.ts';
import type { SessionRecord } from '../../model/account-records.model.ts';
import {
  instant,
  type StoredSessionFields,
  type StoredUserFields,
  toSessionRecord,
  toUserRecord,
} from './account-rows.ts';
import type { AccountStore } from './account-store.port.ts';
import { type ClickHouseContext, dateTime64, keyVersion, type QueryParams } from './clickhouse-context.ts';

const USER_COLUMNS = 'id, email, password_hash, role, workspace_ids, created_at, password_generated';
const SESSION_COLUMNS = 'id, user_id, csrf_token, created_at, expires_at, revoked_at';

type AccountMethods = Pick<
  AccountStore,
  | 'createUser'
  | 'getUser'
  | 'findUserByEmail'
  | 'listUsers'
  | 'setPassword'
  | 'revokeUserSessions'
  | 'countUsers'
  | 'createSession'
  | 'getSession'
  | 'revokeSession'
>;

/** A `sessions` row of a session in the state revoked at `revokedAt` (or live, with null). */
function toSessionRow(session: SessionRecord, revokedAt: string | null): Record<string, unknown> {
  return {
    id: session.id,
    user_id: session.userId,
    csrf_token: session.csrfToken,
    created_at: session.createdAt,
    expires_at: session.expiresAt,
    expires: dateTime64(instant(session.expiresAt, 'expiresAt')),
    revoked_at: revokedAt,
    version: keyVersion(revokedAt === null ? null : instant(revokedAt, 'revokedAt')),
  };
}

/** The accounts-and-sessions part of the ClickHouse account store (see `createClickHouseAccountStore`). */
export function createClickHouseAccounts({ select, insert }: ClickHouseContext): AccountMethods {
  /**
   * Accounts matching `filter` (SQL over `users` columns), by creation, each with its latest
   * changed password and that password's mark, read at once.
   */
  async function readUsers(what: string, filter: string, params: QueryParams) {
    const [rows, changes] = await Promise.all([
      select<StoredUserFields>(
        what,
        `SELECT ${USER_COLUMNS} FROM users FINAL WHERE ${filter} ORDER BY created_at, id`,
        params,
      ),
      select<{ user_id: string; password_hash: string; password_generated: number }>(
        what,
        `SELECT user_id, password_hash, password_generated FROM user_passwords FINAL
         WHERE user_id IN (SELECT id FROM users WHERE ${filter})`,
        params,
      ),
    ]);
    const changed = new Map(changes.map((c) => [c.user_id, c]));
    return rows.map((row) => {
      const change = changed.get(row.id);
      return toUserRecord(
        change ? { ...row, password_hash: change.password_hash, password_generated: change.password_generated } : row,
      );
    });
  }

  return {
    async createUser(user) {
      const email = user.email.toLowerCase();
      const clash = await select<{ id: string }>(
        'checking for an existing account',
        'SELECT id FROM users WHERE id = {id:String} OR email = {email:String} LIMIT 1',
        { id: user.id, email },
      );
      if (clash.length > 0) {
        throw new KbError('conflict', `An account with this id or email (${email}) already exists`, {
          retriable: false,
        });
      }
      await insert('creating an account', 'users', [
        {
          id: user.id,
          email,
          password_hash: user.passwordHash,
          role: user.role,
          workspace_ids: [...user.workspaceIds],
          created_at: user.createdAt,
          password_generated: user.passwordGenerated ? 1 : 0,
        },
      ]);
    },

    async getUser(id) {
      return (await readUsers('reading an account', 'id = {id:String}', { id }))[0] ?? null;
    },

    async findUserByEmail(email) {
      const users = await readUsers('reading an account', 'email = {email:String}', { email: email.toLowerCase() });
      return users[0] ?? null;
    },

    async listUsers() {
      return readUsers('listing accounts', '1 = 1', {});
    },

    async setPassword(userId, passwordHash, at, generated = false) {
      const ms = instant(at, 'at');
      const known = await select<{ id: string }>(
        'reading an account',
        'SELECT id FROM users WHERE id = {id:String} LIMIT 1',
        { id: userId },
      );
      if (known.length === 0) return false;
      await insert('changing a password', 'user_passwords', [
        {
          user_id: userId,
          password_hash: passwordHash,
          changed_at: dateTime64(ms),
          password_generated: generated ? 1 : 0,
        },
      ]);
      return true;
    },

    async revokeUserSessions(userId, at, exceptId) {
      instant(at, 'revokedAt');
      const live = await select<StoredSessionFields>(
        'reading sessions',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL
         WHERE user_id = {userId:String} AND revoked_at IS NULL AND id != {except:String}`,
        { userId, except: exceptId ?? '' },
      );
      await insert(
        'revoking sessions',
        'sessions',
        live.map((row) => toSessionRow(toSessionRecord(row), at)),
      );
      return live.length;
    },

    async countUsers() {
      const rows = await select<{ n: number }>('counting accounts', 'SELECT uniqExact(id) AS n FROM users');
      return Number(rows[0]?.n ?? 0);
    },

    async createSession(session) {
      const row = toSessionRow(session, session.revokedAt);
      const clash = await select<{ id: string }>(
        'checking for an existing session',
        'SELECT id FROM sessions WHERE id = {id:String} LIMIT 1',
        { id: session.id },
      );
      if (clash.length > 0) {
        throw new KbError('conflict', 'A session with this id already exists', { retriable: false });
      }
      await insert('creating a session', 'sessions', [row]);
    },

    async getSession(id) {
      const rows = await select<StoredSessionFields>(
        'reading a session',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL WHERE id = {id:String}`,
        { id },
      );
      return rows[0] ? toSessionRecord(rows[0]) : null;
    },

    async revokeSession(id, at) {
      instant(at, 'revokedAt');
      const rows = await select<StoredSessionFields>(
        'reading a session',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL WHERE id = {id:String}`,
        { id },
      );
      const current = rows[0];
      if (!current) return false;
      if (current.revoked_at !== null) return true;
      await insert('revoking a session', 'sessions', [toSessionRow(toSessionRecord(current), at)]);
      return true;
    },
  };
}
