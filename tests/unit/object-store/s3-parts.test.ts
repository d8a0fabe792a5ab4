import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { budgetedParts, createPartBuffers } from '../../../core/ports/object-store/s3-parts.ts';

/** A body of `length` bytes (a repeating pattern) streamed in chunks of `chunk` bytes. */
function body(length: number, chunk: number): { bytes: Buffer; stream: Readable } {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + 7) % 251;
  const chunks: Buffer[] = [];
  for (let i = 0; i < length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return { bytes, stream: Readable.from(chunks) };
}

describe('S3 upload parts within a memory budget', () => {
  it('cuts a body into full parts and a shorter last one, flagging the last, whatever the chunking', async () => {
    for (const [length, chunk] of [
      [100, 7],
      [96, 32],
      [95, 1000],
      [32, 5],
    ] as const) {
      const { bytes, stream } = body(length, chunk);
      const seen: { size: number; last: boolean }[] = [];
      const copies: Buffer[] = [];
      for await (const part of budgetedParts(stream, createPartBuffers(32, 1))) {
        seen.push({ size: part.bytes.length, last: part.last });
        copies.push(Buffer.from(part.bytes));
        part.release();
      }
      expect(Buffer.concat(copies).equals(bytes)).toBe(true);
      expect(seen.map((p) => p.size)).toEqual(
        Array.from({ length: Math.ceil(length / 32) }, (_, i) => Math.min(32, length - i * 32)),
      );
      expect(seen.map((p) => p.last)).toEqual(seen.map((_, i) => i === seen.length - 1));
    }
    const empty: unknown[] = [];
    for await (const part of budgetedParts(Readable.from([]), createPartBuffers(32, 1))) empty.push(part);
    expect(empty).toEqual([]);
  });

  it('never holds more parts than the budget across concurrent bodies, and finishes them all', async () => {
    const size = 16;
    const budget = createPartBuffers(size, 2);
    let held = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, n) => {
        const { bytes, stream } = body(100 + n, 9);
        const copies: Buffer[] = [];
        for await (const part of budgetedParts(stream, budget)) {
          held += 1;
          most = Math.max(most, held);
          copies.push(Buffer.from(part.bytes));
          // "Sending" the part takes a while, so the bodies overlap.
          await new Promise((r) => setTimeout(r, 2));
          held -= 1;
          part.release();
        }
        return Buffer.concat(copies).equals(bytes);
      }),
    );
    expect(results).toEqual([true, true, true, true, true, true]);
    expect(most).toBe(2);
  });

  it('gives the budget back when the reader stops early or the body fails', async () => {
    const budget = createPartBuffers(16, 1);
    for await (const _part of budgetedParts(body(100, 10).stream, budget)) break;
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(20);
        throw new Error('client went away');
      })(),
    );
    await expect(
      (async () => {
        for await (const part of budgetedParts(failing, budget)) part.release();
      })(),
    ).rejects.toThrow('client went away');
    // Both released their part: a third body still gets one.
    const { stream } = body(10, 10);
    const parts: number[] = [];
    for await (const part of budgetedParts(stream, budget)) parts.push(part.bytes.length);
    expect(parts).toEqual([10]);
  });
});
