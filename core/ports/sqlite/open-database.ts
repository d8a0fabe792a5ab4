import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import BetterSqlite3 from 'better-sqlite3';

export type { Database } from 'better-sqlite3';

/**
 * Opens (creating if needed) the SQLite database file `file`, creating its parent directory. What
 * it creates is its owner's only: the directory 0700, the file 0600 (SQLite gives its `-wal` and
 * `-shm` files the database file's mode); an existing directory or file keeps its mode.
 *
 * The connection is set up for several processes sharing one file: WAL journal,
 * `synchronous=NORMAL` (durable at checkpoints, never corrupt), `busy_timeout=5000` (a writer
 * waits up to 5 s for another writer's lock instead of failing at once) and `foreign_keys=ON`.
 * `:memory:` opens a private in-memory database.
 */
export function openDatabase(file: string): Database {
  if (file !== ':memory:') {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    // SQLite takes an empty file as a new database; creating it first decides its mode.
    try {
      closeSync(openSync(file, 'wx', 0o600));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const db = new BetterSqlite3(file);
  db.pragma('busy_timeout = 5000');
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * Applies the migration `name` once per database: runs `statements` in order inside one
 * transaction and records `name` in the `schema_migrations` table, so later calls with the same
 * name do nothing. Safe when several processes open the same file at the same time: the
 * transaction takes the write lock before checking whether the migration was applied.
 * Names must be unique per database (prefix them with the store, e.g. `message-log-001`).
 */
export function migrate(db: Database, name: string, statements: readonly string[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE name = ?');
  const record = db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)');
  const run = db.transaction(() => {
    if (applied.get(name) !== undefined) return;
    for (const statement of statements) db.exec(statement);
    record.run(name, new Date().toISOString());
  });
  run.immediate();
}
