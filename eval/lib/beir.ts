import { createReadStream } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface BeirDocument {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

export interface BeirQuery {
  readonly id: string;
  readonly text: string;
}

/** Relevance judgements: query id → (document id → grade > 0). */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirSet {
  readonly corpus: BeirDocument[];
  /** The queries that have judgements in the split, in file order. */
  readonly queries: BeirQuery[];
  readonly qrels: Qrels;
}

async function* jsonLines(file: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() !== '') yield JSON.parse(line) as Record<string, unknown>;
  }
}

/**
 * Reads a folder in the BEIR layout: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
 * (`_id`, `text`) and `qrels/<split>.tsv` (`query-id corpus-id score`, with a header line).
 */
export async function readBeir(folder: string, split: string): Promise<BeirSet> {
  const qrelsFile = path.join(folder, 'qrels', `${split}.tsv`);
  for (const file of [path.join(folder, 'corpus.jsonl'), path.join(folder, 'queries.jsonl'), qrelsFile]) {
    await access(file).catch(() => {
      throw new Error(`${file} is missing: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv`);
    });
  }
  const qrels: Qrels = new Map();
  for (const line of (await readFile(qrelsFile, 'utf8')).split('\n').slice(1)) {
    const [queryId, docId, score] = line.trim().split('\t');
    if (!queryId || !docId || !(Number(score) > 0)) continue;
    const judged = qrels.get(queryId) ?? new Map<string, number>();
    judged.set(docId, Number(score));
    qrels.set(queryId, judged);
  }
  const corpus: BeirDocument[] = [];
  for await (const row of jsonLines(path.join(folder, 'corpus.jsonl'))) {
    corpus.push({ id: String(row._id), title: String(row.title ?? ''), text: String(row.text ?? '') });
  }
  const queries: BeirQuery[] = [];
  for await (const row of jsonLines(path.join(folder, 'queries.jsonl'))) {
    const id = String(row._id);
    if (qrels.has(id)) queries.push({ id, text: String(row.text ?? '') });
  }
  return { corpus, queries, qrels };
}

/** The text a document is indexed with: its title, a blank line, its text. */
export function documentText(doc: BeirDocument): string {
  return doc.title ? `${doc.title}\n\n${doc.text}` : doc.text;
}
