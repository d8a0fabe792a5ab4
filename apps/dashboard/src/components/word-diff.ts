/** Word-level differences between two texts (longest common subsequence over words and spaces). */
export interface DiffPart {
  readonly text: string;
  readonly change: 'same' | 'added' | 'removed';
}

const MAX_CELLS = 4_000_000;

export function wordDiff(before: string, after: string): DiffPart[] {
  const a = before.split(/(\s+)/).filter((t) => t !== '');
  const b = after.split(/(\s+)/).filter((t) => t !== '');
  if (a.length * b.length > MAX_CELLS) {
    return [
      { text: before, change: 'removed' },
      { text: after, change: 'added' },
    ];
  }
  const rows = a.length + 1;
  const cols = b.length + 1;
  const lcs = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * cols + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * cols + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * cols + j] ?? 0, lcs[i * cols + j + 1] ?? 0);
    }
  }
  const parts: DiffPart[] = [];
  const push = (text: string, change: DiffPart['change']) => {
    const last = parts.at(-1);
    if (last && last.change === change) parts[parts.length - 1] = { text: last.text + text, change };
    else parts.push({ text, change });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push(a[i] as string, 'same');
      i++;
      j++;
    } else if ((lcs[(i + 1) * cols + j] ?? 0) >= (lcs[i * cols + j + 1] ?? 0)) {
      push(a[i++] as string, 'removed');
    } else {
      push(b[j++] as string, 'added');
    }
  }
  while (i < a.length) push(a[i++] as string, 'removed');
  while (j < b.length) push(b[j++] as string, 'added');
  return grouped(parts);
}

/**
 * Reads better: a run of changes separated only by spaces becomes one removed text followed by
 * one added text ("amber storms" → "violet squalls" rather than word by word).
 */
function grouped(parts: readonly DiffPart[]): DiffPart[] {
  const out: DiffPart[] = [];
  let removed = '';
  let added = '';
  let pendingSpace = '';
  const flush = () => {
    if (removed) out.push({ text: removed, change: 'removed' });
    if (added) out.push({ text: added, change: 'added' });
    if (pendingSpace) out.push({ text: pendingSpace, change: 'same' });
    removed = '';
    added = '';
    pendingSpace = '';
  };
  for (const part of parts) {
    const inRun = removed !== '' || added !== '';
    if (part.change === 'same') {
      if (inRun && /^\s+$/.test(part.text) && pendingSpace === '') {
        pendingSpace = part.text;
        continue;
      }
      flush();
      out.push(part);
      continue;
    }
    if (pendingSpace) {
      removed += removed ? pendingSpace : '';
      added += added ? pendingSpace : '';
      pendingSpace = '';
    }
    if (part.change === 'removed') removed += part.text;
    else added += part.text;
  }
  flush();
  return out;
}
