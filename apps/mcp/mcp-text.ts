/**
 * The text an MCP tool answers with: what a reader (a person or a language model) needs, with a
 * citation for every passage — document name, id, version and chunk — so an answer built from it
 * can say where each statement came from.
 */
import type {
  ChunksView,
  CompareView,
  ContextView,
  DocumentListItemView,
  DocumentView,
  PaginationView,
  SearchView,
  VersionView,
} from '../../core/model/response-views.model.ts';

/** `[notes.md · document 0192… · version 2 · chunk 3]`: how every passage is cited. */
export function citation(name: string, documentId: string, version: number, chunk?: number): string {
  const parts = [name, `document ${documentId}`, `version ${version}`];
  if (chunk !== undefined) parts.push(`chunk ${chunk}`);
  return `[${parts.join(' · ')}]`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function moreLine(pagination: PaginationView): string {
  return pagination.has_more && pagination.next_cursor
    ? `\nMore: call again with cursor "${pagination.next_cursor}".`
    : '';
}

export function searchText(view: SearchView): string {
  const when = view.as_of ? `as of ${view.as_of}` : 'now';
  const head = `${plural(view.results.length, 'result')} for "${view.query}" (${view.mode} search, the knowledge base ${when}).`;
  const warnings = (view.warnings ?? []).map((w) => `Warning: ${w}`);
  const results = view.results.map(
    (r, i) =>
      `${i + 1}. ${citation(r.document_name, r.document_id, r.version, r.index)} score ${r.score.toFixed(3)}` +
      `${r.page === null ? '' : `, page ${r.page}`}\n${r.content}`,
  );
  return [head, ...warnings, ...results].join('\n\n');
}

export function documentText(view: DocumentView, text: string | null): string {
  const lines = [
    `${view.name} ${citation(view.name, view.document_id, view.version)}`,
    `status: ${view.status}; latest version ${view.version}; served version ${view.served_version ?? 'none'}`,
    `type: ${view.mime_type}; ${view.size_bytes} bytes; ${plural(view.stats.chunks, 'chunk')}, ${plural(view.stats.tokens, 'token')}`,
    `source: ${view.source}; created ${view.created_at}; updated ${view.updated_at}`,
    `metadata: ${JSON.stringify(view.metadata)}`,
  ];
  if (view.error) lines.push(`error: ${view.error.message}`);
  if (text !== null) lines.push('', text);
  return lines.join('\n');
}

export function contextText(name: string, view: ContextView, maxChars: number): string {
  const cut = view.content.length > maxChars;
  const body = cut ? view.content.slice(0, maxChars) : view.content;
  return (
    `Text of version ${view.version} (${plural(view.chunk_count, 'chunk')}, ${plural(view.tokens, 'token')}) ` +
    `${citation(name, view.document_id, view.version)}:\n\n${body}` +
    (cut ? `\n\n[… cut at ${maxChars} of ${view.content.length} characters; read the rest with get_chunks]` : '')
  );
}

export function chunksText(name: string, view: ChunksView): string {
  const head = `${plural(view.chunks.length, 'chunk')} of version ${view.version} of ${name} (document ${view.document_id}).`;
  const chunks = view.chunks.map(
    (c) =>
      `${citation(name, view.document_id, view.version, c.index)}${c.page === null ? '' : ` page ${c.page}`}\n${c.content}`,
  );
  return [head, ...chunks].join('\n\n') + moreLine(view.pagination);
}

export function documentListText(documents: readonly DocumentListItemView[], pagination: PaginationView): string {
  const head = `${plural(documents.length, 'document')} of ${pagination.total} in the workspace, newest first.`;
  const rows = documents.map(
    (d) =>
      `- ${d.name} ${citation(d.name, d.document_id, d.version)} ${d.status}, ${d.mime_type}, ` +
      `${plural(d.stats.chunks, 'chunk')}, updated ${d.updated_at}, metadata ${JSON.stringify(d.metadata)}`,
  );
  return [head, ...rows].join('\n') + moreLine(pagination);
}

export function versionsText(name: string, documentId: string, versions: readonly VersionView[]): string {
  const head = `${plural(versions.length, 'version')} of ${name} (document ${documentId}), newest first.`;
  const rows = versions.map((v) => {
    const served = v.served_from
      ? `served ${v.served_from} – ${v.served_until ?? 'now'}`
      : v.archived
        ? 'archived'
        : 'never served';
    const why = [
      v.change_reason ? `reason: ${v.change_reason}` : '',
      v.restored_from !== null ? `restored from version ${v.restored_from}` : '',
    ].filter(Boolean);
    return (
      `- ${citation(v.name, documentId, v.version)} ${v.status}, created ${v.created_at}, ` +
      `${plural(v.chunk_count, 'chunk')}; ${served}${why.length ? `; ${why.join('; ')}` : ''}`
    );
  });
  return [head, ...rows].join('\n');
}

export function compareText(name: string, view: CompareView): string {
  const c = view.changes;
  const head =
    `${name} (document ${view.document_id}), version ${view.from_version} → ${view.to_version}: ` +
    `${c.added_chunks} added, ${c.removed_chunks} removed, ${c.modified_chunks} modified, ${c.unchanged_chunks} unchanged chunks.`;
  const from = (i: number) => citation(name, view.document_id, view.from_version, i);
  const to = (i: number) => citation(name, view.document_id, view.to_version, i);
  const entries = c.diff.map((d) => {
    if (d.type === 'added') return `+ added ${to(d.to_index)}\n${d.content}`;
    if (d.type === 'removed') return `- removed ${from(d.from_index)}\n${d.content}`;
    return `~ modified ${from(d.from_index)} → ${to(d.to_index)}\nbefore:\n${d.old_content}\nafter:\n${d.new_content}`;
  });
  return [head, ...entries].join('\n\n');
}
