import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteContext, type SqliteContext } from '../../../core/ports/document-store/sqlite/sqlite-context.ts';
import { createChunkCounter } from '../../../core/ports/document-store/sqlite/sqlite-keyword-search.ts';

/**
 * The chunk count that chooses between the keyword index and FTS5: right after every insert,
 * rewrite and delete, on either side of the threshold, though it counts again only when the
 * change log has moved far enough to matter.
 */

let context: SqliteContext;

const lastChange = () =>
  context.db
    .prepare<[], { id: number }>(
      "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'keyword_changes'), 0) AS id",
    )
    .get()?.id ?? 0;

function insert(ids: readonly string[]): void {
  const statement = context.db.prepare(
    `INSERT INTO chunks (id, document_id, version, workspace_id, idx, content, content_hash, tokens, start_offset,
       end_offset, page, metadata) VALUES (?, 'd', 1, 'ws', ?, ?, 'h', 1, 0, 1, NULL, '{}')
     ON CONFLICT (id) DO UPDATE SET content = excluded.content`,
  );
  context.db.transaction(() => {
    for (const [i, id] of ids.entries()) statement.run(id, i, `text of ${id}`);
  })();
}

const remove = (ids: readonly string[]) =>
  context.db.prepare('DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(ids));

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `c${from + i}`);

beforeEach(() => {
  context = openSqliteContext({ file: ':memory:' });
});

afterEach(async () => {
  await context.close();
});

describe('chunk counter', () => {
  it('answers whether the database holds at least n chunks after every kind of write', () => {
    const holdsAtLeast = createChunkCounter(context.db, lastChange);
    expect(holdsAtLeast(1)).toBe(false);
    expect(holdsAtLeast(0)).toBe(true);
    insert(ids(0, 5));
    expect(holdsAtLeast(5)).toBe(true);
    expect(holdsAtLeast(6)).toBe(false);
    // Rewrites log changes but leave the count.
    insert(ids(0, 5));
    expect(holdsAtLeast(5)).toBe(true);
    expect(holdsAtLeast(6)).toBe(false);
    insert(ids(5, 40));
    expect(holdsAtLeast(40)).toBe(true);
    expect(holdsAtLeast(41)).toBe(false);
    expect(holdsAtLeast(3)).toBe(true);
    remove(ids(10, 40));
    expect(holdsAtLeast(11)).toBe(false);
    expect(holdsAtLeast(10)).toBe(true);
    insert(['late']);
    expect(holdsAtLeast(11)).toBe(true);
    remove(ids(0, 10));
    expect(holdsAtLeast(2)).toBe(false);
    expect(holdsAtLeast(1)).toBe(true);
  });
});
