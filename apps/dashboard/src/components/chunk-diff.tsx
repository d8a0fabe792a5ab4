import type { Compare, DiffEntry } from '../types.ts';
import { wordDiff } from './word-diff.ts';

function Modified(props: { entry: Extract<DiffEntry, { type: 'modified' }> }) {
  const parts = wordDiff(props.entry.old_content, props.entry.new_content);
  return (
    <p class="diff-text">
      {parts.map((p, i) =>
        p.change === 'same' ? p.text : p.change === 'added' ? <ins key={i}>{p.text}</ins> : <del key={i}>{p.text}</del>,
      )}
    </p>
  );
}

/** The chunk-level diff of two versions; modified chunks inline, changed words marked. */
export function ChunkDiff(props: { compare: Compare }) {
  const { changes, from_version, to_version } = props.compare;
  return (
    <div class="diff" data-testid="diff">
      <p>
        From version {from_version} to {to_version}: <span class="tag tag-added">{changes.added_chunks} added</span>{' '}
        <span class="tag tag-removed">{changes.removed_chunks} removed</span>{' '}
        <span class="tag tag-modified">{changes.modified_chunks} modified</span>{' '}
        <span class="tag">{changes.unchanged_chunks} unchanged</span>
      </p>
      {changes.diff.length === 0 && <p class="empty">The two versions have the same chunks.</p>}
      <ol class="diff-list">
        {changes.diff.map((entry) => (
          <li key={`${entry.type}-${entry.from_index}-${entry.to_index}`} class={`diff-${entry.type}`}>
            <p class="diff-head">
              {entry.type === 'added' && `Added chunk ${entry.to_index}`}
              {entry.type === 'removed' && `Removed chunk ${entry.from_index}`}
              {entry.type === 'modified' && `Chunk ${entry.from_index} → ${entry.to_index}, modified`}
            </p>
            {entry.type === 'modified' ? (
              <Modified entry={entry} />
            ) : (
              <p class="diff-text">
                {entry.type === 'added' ? <ins>{entry.content}</ins> : <del>{entry.content}</del>}
              </p>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
