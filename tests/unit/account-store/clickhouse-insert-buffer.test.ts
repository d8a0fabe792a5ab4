import { describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { createInsertBuffer } from '../../../core/ports/account-store/clickhouse-insert-buffer.ts';

/** An insert that records what it wrote and refuses (the engine unavailable) while `down` is set. */
function target() {
  const written: unknown[][] = [];
  const state = { down: false, attempts: 0 };
  const insert = async (rows: Record<string, unknown>[]) => {
    state.attempts += 1;
    if (state.down) throw new KbError('engine-unavailable', 'ClickHouse is not answering', { retriable: true });
    written.push(rows.map((r) => r.n));
  };
  return { written, state, insert };
}

const rows = (...ns: number[]) => ns.map((n) => ({ n }));
const options = { flushMs: 20, maxRows: 1_000, maxHeldRows: 1_000, retryMs: 30, onRefused: () => undefined };

describe('insert buffer (the ClickHouse audit entries)', () => {
  it('answers an add once its rows are written, sharing one insert among the adds that arrive together', async () => {
    const { written, insert } = target();
    const buffer = createInsertBuffer(insert, options);
    await Promise.all([buffer.add(rows(1)), buffer.add(rows(2, 3)), buffer.add(rows(4))]);
    expect(written).toEqual([[1, 2, 3, 4]]);
    await buffer.add(rows(5));
    expect(written).toEqual([[1, 2, 3, 4], [5]]);
  });

  it('while the engine is unavailable, answers after the failed insert and writes the rows, in order, once it is back', async () => {
    const { written, state, insert } = target();
    const buffer = createInsertBuffer(insert, options);
    state.down = true;
    await buffer.add(rows(1));
    await buffer.add(rows(2));
    expect(written).toEqual([]);
    state.down = false;
    const deadline = Date.now() + 2_000;
    while (written.flat().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(written.flat()).toEqual([1, 2]);
    await buffer.add(rows(3));
    expect(written.flat()).toEqual([1, 2, 3]);
    await buffer.close();
  });

  it('close writes what is held, and says so when it cannot', async () => {
    const { written, state, insert } = target();
    const buffer = createInsertBuffer(insert, { ...options, retryMs: 60_000 });
    state.down = true;
    await buffer.add(rows(1));
    await expect(buffer.close()).rejects.toThrow(/1 buffered row\(s\) could not be written/);
    expect(written).toEqual([]);
  });
});
