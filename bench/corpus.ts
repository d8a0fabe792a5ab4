/**
 * The benchmark corpus: markdown notes, CSV tables and PDF reports with log-normally varied lengths,
 * written from a seeded generator so every run (and every machine) gets the same bytes.
 *
 *   node --import tsx bench/corpus.ts --size 1k --out /tmp/kb-corpus [--seed 42]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writePdf } from './lib/pdf-writer.ts';
import { createRandom, type Random, seedFrom } from './lib/random.ts';

export const DEFAULT_SEED = 20_240_601;

/** `a|b|c` → `['a', 'b', 'c']`. */
const words = (list: string): string[] => list.split('|');

/** Words of each topic, `|`-separated: nouns, then adjectives. */
const TOPICS: Record<string, { nouns: string[]; adjectives: string[] }> = Object.fromEntries(
  Object.entries<[string, string]>({
    glaciology: [
      'glacier|moraine|ice sheet|crevasse|meltwater|firn|snowpack|ablation zone|ice core|calving front|terminus|cirque|sediment|bedrock|outlet stream|accumulation|ice shelf|drumlin|permafrost|albedo',
      'retreating|polar|subglacial|seasonal|frozen|alpine|thinning|debris-covered',
    ],
    volcanology: [
      'volcano|magma chamber|lava flow|caldera|ash plume|fissure|pyroclastic flow|fumarole|tephra|dome|vent|basalt|eruption|seismic swarm|gas emission|lahar|crater lake|rift|obsidian|scoria',
      'active|dormant|explosive|effusive|basaltic|volcanic|molten|sulfurous',
    ],
    oceanography: [
      'coral reef|current|estuary|tide|salinity gradient|kelp forest|upwelling|plankton bloom|seafloor|thermocline|mangrove|lagoon|trench|sea grass|buoy|wave height|reef flat|dissolved oxygen|shoreline|sandbar',
      'coastal|marine|tidal|pelagic|brackish|warming|acidic|shallow',
    ],
    logistics: [
      'warehouse|shipment|pallet|carrier|freight invoice|delivery window|inventory|purchase order|route|container|customs declaration|dock|forklift|backorder|supplier|lead time|cross-dock|manifest|tracking number|fulfilment centre',
      'inbound|outbound|delayed|refrigerated|bulk|expedited|regional|damaged',
    ],
    software: [
      'service|deployment|database|message queue|cache|load balancer|release|incident|latency budget|schema migration|feature flag|container image|API gateway|build pipeline|test suite|log stream|replica|index|retry policy|rollback',
      'distributed|stateless|degraded|idempotent|asynchronous|scalable|legacy|encrypted',
    ],
    medicine: [
      'patient|clinical trial|dosage|biomarker|diagnosis|symptom|cohort|placebo group|adverse event|vaccine|antibody|blood pressure|treatment plan|ward|protocol|lesion|prescription|outpatient visit|follow-up|immune response',
      'chronic|acute|randomised|paediatric|elevated|benign|clinical|preventive',
    ],
    finance: [
      'budget|quarterly report|invoice|ledger|cash flow|forecast|audit|expense claim|revenue|margin|liability|asset|dividend|tax return|balance sheet|payroll|variance|reconciliation|credit line|depreciation',
      'fiscal|operating|deferred|projected|audited|quarterly|net|consolidated',
    ],
    agriculture: [
      'harvest|irrigation|soil moisture|crop rotation|seed bank|fertiliser|orchard|greenhouse|pasture|yield|drought|pest outbreak|tractor|silo|compost|vineyard|grain price|cover crop|livestock|field trial',
      'organic|arable|irrigated|drought-tolerant|seasonal|rural|fertile|sustainable',
    ],
  }).map(([topic, [nouns, adjectives]]) => [topic, { nouns: words(nouns), adjectives: words(adjectives) }]),
);
const TOPIC_NAMES = Object.keys(TOPICS);

const VERBS = words(
  'measured|reported|reduced|increased|monitored|documented|affected|revealed|supported|replaced|tracked|estimated|compared|improved|delayed|confirmed|sampled|reviewed',
);
const CONNECTORS = words(
  'However,|In addition,|As a result,|Meanwhile,|By contrast,|During the survey,|Over the following weeks,|According to the team,|In the second phase,|Overall,',
);
const PLACES = words(
  'the northern site|region 4|the eastern basin|the main campus|station B|the pilot area|the lower valley|zone 12|the harbour district|the test field',
);
const PEOPLE = words(
  'Dr. Okafor|the field team|Ms. Lindqvist|the operations group|Prof. Tanaka|the review board|Mr. Haddad|the night shift|Dr. Moreau|the regional office',
);
const REGIONS = words('North|South|East|West|Central|Coastal|Highland|Metro');
const STATUSES = words('open|closed|pending|approved|rejected|in review|shipped|on hold');

export type CorpusKind = 'markdown' | 'csv' | 'pdf';

export interface CorpusDocument {
  /** File name, e.g. `doc-00042.md`. */
  readonly name: string;
  readonly kind: CorpusKind;
  readonly mimeType: string;
  readonly bytes: Buffer;
  /** UTF-8 bytes of the document's text (what a parser extracts, give or take whitespace). */
  readonly textBytes: number;
  readonly topic: string;
}

/** `1k` → 1000, `10k` → 10000, `1m` → 1000000, `200` → 200. */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (!match) throw new Error(`Not a size: ${value} (use e.g. 200, 1k, 10k, 1m)`);
  const unit = (match[2] ?? '').toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'm' ? 1_000_000 : unit === 'k' ? 1000 : 1));
}

export function sizeLabel(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

/** A sentence about one topic: readable, varied, with the topic's words at a Zipf-like rate. */
export function sentence(rng: Random, topic: string): string {
  const t = TOPICS[topic] as (typeof TOPICS)[string];
  const noun = () => (rng.chance(0.85) ? rng.pick(t.nouns) : rng.pick(TOPICS[rng.pick(TOPIC_NAMES)]!.nouns));
  const adj = () => rng.pick(t.adjectives);
  const forms = [
    () =>
      `The ${adj()} ${noun()} near ${rng.pick(PLACES)} ${rng.pick(VERBS)} the ${noun()} by ${rng.int(2, 95)} percent.`,
    () => `${rng.pick(PEOPLE)} ${rng.pick(VERBS)} a ${adj()} ${noun()} after the ${noun()} was ${rng.pick(VERBS)}.`,
    () => `${rng.pick(CONNECTORS)} the ${noun()} ${rng.pick(VERBS)} ${rng.int(3, 400)} samples of ${adj()} ${noun()}.`,
    () => `Each ${noun()} was ${rng.pick(VERBS)} twice, and the ${adj()} ${noun()} remained within the expected range.`,
    () =>
      `A ${adj()} ${noun()} and a ${noun()} were ${rng.pick(VERBS)} in ${rng.pick(PLACES)} during week ${rng.int(1, 52)}.`,
    () =>
      `${rng.pick(CONNECTORS)} ${rng.pick(PEOPLE)} noted that the ${noun()} ${rng.pick(VERBS)} the ${adj()} ${noun()}.`,
  ];
  return rng.pick(forms)();
}

function paragraph(rng: Random, topic: string, words: number): { text: string; words: number } {
  const sentences: string[] = [];
  let count = 0;
  while (count < words) {
    const s = sentence(rng, topic);
    sentences.push(s);
    count += s.split(' ').length;
  }
  return { text: sentences.join(' '), words: count };
}

function title(rng: Random, topic: string): string {
  const t = TOPICS[topic] as (typeof TOPICS)[string];
  const noun = rng.pick(t.nouns);
  const kinds = ['Field report', 'Review of', 'Notes on', 'Status update:', 'Assessment of', 'Guide to', 'Summary:'];
  return `${rng.pick(kinds)} ${rng.pick(t.adjectives)} ${noun} in ${rng.pick(PLACES)}`;
}

function markdownDocument(rng: Random, topic: string): string {
  const target = rng.logNormal(380, 0.9, 40, 9000);
  const parts = [`# ${title(rng, topic)}`];
  let words = 0;
  while (words < target) {
    const t = TOPICS[topic] as (typeof TOPICS)[string];
    parts.push(
      `## ${rng.pick(t.adjectives)} ${rng.pick(t.nouns)}`.replace(/## (.)/, (_, c: string) => `## ${c.toUpperCase()}`),
    );
    const paragraphs = rng.int(2, 5);
    for (let p = 0; p < paragraphs && words < target; p++) {
      const para = paragraph(rng, topic, rng.int(40, 160));
      parts.push(para.text);
      words += para.words;
    }
    if (rng.chance(0.3)) {
      const items = Array.from({ length: rng.int(2, 6) }, () => `- ${sentence(rng, topic)}`);
      parts.push(items.join('\n'));
      words += items.join(' ').split(' ').length;
    }
  }
  return `${parts.join('\n\n')}\n`;
}

function csvDocument(rng: Random, topic: string): string {
  const t = TOPICS[topic] as (typeof TOPICS)[string];
  const rows = rng.logNormal(30, 0.9, 4, 1200);
  const lines = ['id,date,region,item,quantity,unit_price,status,notes'];
  for (let i = 0; i < rows; i++) {
    const date = `2024-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
    const note = sentence(rng, topic).replaceAll('"', "'");
    lines.push(
      [
        `R${String(i + 1).padStart(5, '0')}`,
        date,
        rng.pick(REGIONS),
        rng.pick(t.nouns),
        rng.int(1, 500),
        (rng.int(100, 250_000) / 100).toFixed(2),
        rng.pick(STATUSES),
        `"${note}"`,
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Wraps text into lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

function pdfDocument(rng: Random, topic: string): { bytes: Buffer; text: string } {
  const pageCount = rng.logNormal(2, 0.7, 1, 16);
  const pages: string[][] = [];
  for (let p = 0; p < pageCount; p++) {
    const lines: string[] = p === 0 ? [title(rng, topic), ''] : [];
    while (lines.length < 36) {
      lines.push(...wrap(paragraph(rng, topic, rng.int(50, 140)).text, 95), '');
    }
    pages.push(lines.slice(0, 40));
  }
  return { bytes: writePdf(pages), text: pages.map((lines) => lines.join('\n')).join('\n\n') };
}

/** Document `index` of the corpus with `seed`: the same pair always gives the same bytes. */
export function corpusDocument(index: number, seed = DEFAULT_SEED): CorpusDocument {
  const rng = createRandom(seedFrom(`document-${index}`, seed));
  const topic = rng.pick(TOPIC_NAMES);
  const roll = rng.next();
  const id = `doc-${String(index).padStart(5, '0')}`;
  if (roll < 0.5) {
    const text = markdownDocument(rng, topic);
    const bytes = Buffer.from(text, 'utf8');
    return { name: `${id}.md`, kind: 'markdown', mimeType: 'text/markdown', bytes, textBytes: bytes.length, topic };
  }
  if (roll < 0.75) {
    const text = csvDocument(rng, topic);
    const bytes = Buffer.from(text, 'utf8');
    return { name: `${id}.csv`, kind: 'csv', mimeType: 'text/csv', bytes, textBytes: bytes.length, topic };
  }
  const pdf = pdfDocument(rng, topic);
  return {
    name: `${id}.pdf`,
    kind: 'pdf',
    mimeType: 'application/pdf',
    bytes: pdf.bytes,
    textBytes: Buffer.byteLength(pdf.text, 'utf8'),
    topic,
  };
}

export function* corpusDocuments(size: number, seed = DEFAULT_SEED): Generator<CorpusDocument> {
  for (let i = 0; i < size; i++) yield corpusDocument(i, seed);
}

export interface CorpusSummary {
  readonly documents: number;
  readonly seed: number;
  readonly files: Record<CorpusKind, number>;
  readonly fileMb: number;
  readonly textMb: number;
}

/** Writes the corpus into `dir` (created if missing); returns the file paths, in order, and a summary. */
export async function writeCorpus(
  dir: string,
  size: number,
  seed = DEFAULT_SEED,
): Promise<{ files: string[]; documents: CorpusDocument[]; summary: CorpusSummary }> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  const documents: CorpusDocument[] = [];
  for (const doc of corpusDocuments(size, seed)) {
    const file = path.join(dir, doc.name);
    await writeFile(file, doc.bytes);
    files.push(file);
    documents.push(doc);
  }
  return { files, documents, summary: summarize(documents, seed) };
}

export function summarize(documents: readonly CorpusDocument[], seed: number): CorpusSummary {
  const files: Record<CorpusKind, number> = { markdown: 0, csv: 0, pdf: 0 };
  let fileBytes = 0;
  let textBytes = 0;
  for (const doc of documents) {
    files[doc.kind]++;
    fileBytes += doc.bytes.length;
    textBytes += doc.textBytes;
  }
  return { documents: documents.length, seed, files, fileMb: fileBytes / 1e6, textMb: textBytes / 1e6 };
}

/** Search queries over the corpus vocabulary: two to six words, some with a place or a number. */
export function corpusQueries(count: number, seed = DEFAULT_SEED): string[] {
  const rng = createRandom(seedFrom('queries', seed));
  return Array.from({ length: count }, () => {
    const t = TOPICS[rng.pick(TOPIC_NAMES)] as (typeof TOPICS)[string];
    const words = [rng.pick(t.adjectives), rng.pick(t.nouns)];
    if (rng.chance(0.6)) words.push(rng.pick(t.nouns));
    if (rng.chance(0.3)) words.push(rng.pick(VERBS));
    if (rng.chance(0.2)) words.push('in', rng.pick(PLACES));
    return words.join(' ');
  });
}

/** The single words of the corpus's topics and verbs (lower case, letters only), each once. */
export function corpusWords(): string[] {
  const all = [...Object.values(TOPICS).flatMap((t) => [...t.nouns, ...t.adjectives]), ...VERBS].flatMap((phrase) =>
    phrase.toLowerCase().split(/[\s-]+/),
  );
  return [...new Set(all.filter((word) => /^[a-z]+$/.test(word)))];
}

/** A chunk-sized passage (60–380 words) for synthetic search data, in the corpus's style. */
export function passage(rng: Random): string {
  const topic = rng.pick(TOPIC_NAMES);
  return paragraph(rng, topic, rng.logNormal(170, 0.5, 60, 380)).text;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '1k' },
      out: { type: 'string' },
      seed: { type: 'string', default: String(DEFAULT_SEED) },
    },
  });
  if (!values.out) {
    console.error('usage: node --import tsx bench/corpus.ts --size 1k --out <dir> [--seed N]');
    process.exitCode = 2;
    return;
  }
  const { summary } = await writeCorpus(values.out, parseSize(values.size), Number(values.seed));
  console.log(JSON.stringify(summary));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
