import type { DiffEntryView } from '../model/response-views.model.ts';

export interface DiffInput {
  readonly index: number;
  readonly contentHash: string;
  readonly content: string;
}

/** Cells of the LCS table above which the diff falls back to anchoring on unique hashes. */
const MAX_LCS_CELLS = 25_000_000;

/**
 * Aligns two versions' chunks by content: the longest common subsequence over content hashes
 * marks unchanged chunks; between two anchors, leftovers are paired position by position as
 * `modified`, the rest are `removed` (old side) or `added` (new side).
 */
export function diffChunks(
  from: readonly DiffInput[],
  to: readonly DiffInput[],
): { diff: DiffEntryView[]; unchanged: number } {
  const pairs = alignment(
    from.map((c) => c.contentHash),
    to.map((c) => c.contentHash),
  );
  const diff: DiffEntryView[] = [];
  let i = 0;
  let j = 0;
  const flush = (iEnd: number, jEnd: number) => {
    while (i < iEnd && j < jEnd) {
      const a = from[i++] as DiffInput;
      const b = to[j++] as DiffInput;
      diff.push({
        type: 'modified',
        from_index: a.index,
        to_index: b.index,
        old_content: a.content,
        new_content: b.content,
      });
    }
    while (i < iEnd) {
      const a = from[i++] as DiffInput;
      diff.push({ type: 'removed', from_index: a.index, to_index: null, content: a.content });
    }
    while (j < jEnd) {
      const b = to[j++] as DiffInput;
      diff.push({ type: 'added', from_index: null, to_index: b.index, content: b.content });
    }
  };
  for (const [ai, bj] of pairs) {
    flush(ai, bj);
    i = ai + 1;
    j = bj + 1;
  }
  flush(from.length, to.length);
  return { diff, unchanged: pairs.length };
}

/** Index pairs (i, j) of one longest common subsequence, ascending. */
function alignment(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  // Trim the common prefix and suffix first: most edits are local.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < start; k++) pairs.push([k, k]);
  const n = endA - start;
  const m = endB - start;
  if (n > 0 && m > 0) {
    const middle = n * m <= MAX_LCS_CELLS ? lcs(a, b, start, endA, endB) : uniqueAnchors(a, b, start, endA, endB);
    pairs.push(...middle);
  }
  for (let k = 0; k < a.length - endA; k++) pairs.push([endA + k, endB + k]);
  return pairs;
}

function lcs(a: readonly string[], b: readonly string[], start: number, endA: number, endB: number) {
  const n = endA - start;
  const m = endB - start;
  const table = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[at(i, j)] =
        a[start + i] === b[start + j]
          ? (table[at(i + 1, j + 1)] as number) + 1
          : Math.max(table[at(i + 1, j)] as number, table[at(i, j + 1)] as number);
    }
  }
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[start + i] === b[start + j]) {
      pairs.push([start + i, start + j]);
      i++;
      j++;
    } else if ((table[at(i + 1, j)] as number) >= (table[at(i, j + 1)] as number)) {
      i++;
    } else {
      j++;
    }
  }
  return pairs;
}

/** For huge inputs: anchor on hashes that occur once on each side, kept in increasing order. */
function uniqueAnchors(a: readonly string[], b: readonly string[], start: number, endA: number, endB: number) {
  const count = (xs: readonly string[], from: number, to: number) => {
    const m = new Map<string, number>();
    for (let k = from; k < to; k++) m.set(xs[k] as string, (m.get(xs[k] as string) ?? -1) === -1 ? k : -2);
    return m;
  };
  const inA = count(a, start, endA);
  const inB = count(b, start, endB);
  const pairs: Array<[number, number]> = [];
  let lastJ = -1;
  for (let i = start; i < endA; i++) {
    const ia = inA.get(a[i] as string);
    const jb = inB.get(a[i] as string);
    if (ia === undefined || ia < 0 || jb === undefined || jb < 0 || jb <= lastJ) continue;
    pairs.push([i, jb]);
    lastJ = jb;
  }
  return pairs;
}
