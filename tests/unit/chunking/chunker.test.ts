import { describe, expect, it } from 'vitest';
import { type ChunkDraft, type ChunkingResult, chunkDocument, countTokens } from '../../../core/chunking/chunker.ts';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { ParsedDocument, TextBlock } from '../../../core/parsing/parsed-document.ts';
import { seededRandom } from '../../support/seeded-prose.ts';

// ---------------------------------------------------------------------------------------------
// Helpers: seeded prose, a markdown-like text → blocks builder, and chunk-set comparison.

const WORDS = (
  'the a an system network river mountain data signal quiet bright engine model garden winter summer paper ' +
  'stone light market city road music table window forest ocean cloud memory number letter silver golden rapid ' +
  'gentle ancient modern hidden open careful simple complex early late north south under over through across ' +
  'between within without measure build carry follow gather hold keep watch wonder travel write read listen ' +
  'answer question reason story harbour valley meadow lantern compass voyage archive ledger beacon circuit ' +
  'quarry orchard festival glacier canyon prairie tundra island village castle bridge tower station library'
).split(' ');

function sentence(random: () => number): string {
  const count = 6 + Math.floor(random() * 14);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(WORDS[Math.floor(random() * WORDS.length)] as string);
  const text = words.join(' ');
  return `${text[0]?.toUpperCase()}${text.slice(1)}${random() < 0.1 ? '?' : '.'}`;
}

function paragraph(random: () => number, sentences = 2 + Math.floor(random() * 5)): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(random));
  return out.join(' ');
}

function paragraphs(seed: number, count: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => paragraph(random));
}

interface BlockExtras {
  readonly page?: number | null;
  readonly ocr?: boolean;
}

/**
 * Markdown-like text → ParsedDocument: blocks are separated by blank lines; `#`… lines are headings
 * (markers removed), `- ` lines list items, everything else paragraphs. Blocks are joined by "\n\n".
 */
function docFromMarkdown(markdown: string, extras: (index: number) => BlockExtras = () => ({})): ParsedDocument {
  let text = '';
  const blocks: TextBlock[] = [];
  for (const part of markdown.split(/\n{2,}/)) {
    const body = part.trim();
    if (body === '') continue;
    if (text !== '') text += '\n\n';
    const heading = /^(#{1,6}) (.*)$/.exec(body);
    const content = heading ? (heading[2] as string) : body;
    const start = text.length;
    text += content;
    const { page = null, ocr } = extras(blocks.length);
    const common = { start, end: text.length, page, ...(ocr ? { ocr } : {}) };
    if (heading) blocks.push({ kind: 'heading', level: (heading[1] as string).length, ...common });
    else if (body.startsWith('- ')) blocks.push({ kind: 'list-item', ...common });
    else blocks.push({ kind: 'paragraph', ...common });
  }
  return { text, blocks, pageCount: null, warnings: [] };
}

function blockText(doc: ParsedDocument, block: TextBlock): string {
  return doc.text.slice(block.start, block.end);
}

function ownText(doc: ParsedDocument, chunk: ChunkDraft): string {
  return doc.text.slice(chunk.startOffset, chunk.endOffset);
}

/** How many chunks of `after` are not in `before` (added) and the reverse (removed), by content hash. */
function changedChunks(before: ChunkingResult, after: ChunkingResult): { added: number; removed: number } {
  const count = (result: ChunkingResult): Map<string, number> => {
    const map = new Map<string, number>();
    for (const chunk of result.chunks) map.set(chunk.contentHash, (map.get(chunk.contentHash) ?? 0) + 1);
    return map;
  };
  const a = count(before);
  const b = count(after);
  let added = 0;
  let removed = 0;
  for (const [hash, n] of b) added += Math.max(0, n - (a.get(hash) ?? 0));
  for (const [hash, n] of a) removed += Math.max(0, n - (b.get(hash) ?? 0));
  return { added, removed };
}

/** Replaces sentence `which` of paragraph `index` with a new sentence. */
function editSentence(paras: string[], index: number, which: number, random: () => number): string[] {
  const sentences = (paras[index] as string).split(/(?<=[.?]) /);
  sentences[Math.min(which, sentences.length - 1)] = sentence(random);
  const copy = paras.slice();
  copy[index] = sentences.join(' ');
  return copy;
}

/** Checks the invariants every chunking must keep. */
function expectWellFormed(doc: ParsedDocument, result: ChunkingResult, chunkTokens: number): void {
  let previousEnd = -1;
  let sum = 0;
  result.chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.tokens).toBeGreaterThan(0);
    expect(chunk.tokens).toBeLessThanOrEqual(chunkTokens);
    expect(countTokens(ownText(doc, chunk))).toBeLessThanOrEqual(chunkTokens);
    expect(chunk.startOffset).toBeGreaterThanOrEqual(previousEnd);
    expect(chunk.endOffset).toBeGreaterThan(chunk.startOffset);
    expect(chunk.content).toContain(ownText(doc, chunk));
    expect(chunk.content.endsWith(ownText(doc, chunk))).toBe(true);
    expect(chunk.contentHash).toMatch(/^[0-9a-f]{64}$/);
    previousEnd = chunk.endOffset;
    sum += chunk.tokens;
  });
  expect(result.tokens).toBe(sum);
  // Every block's text lies inside the own text of the chunks.
  for (const block of doc.blocks) {
    const covering = result.chunks.filter((c) => c.endOffset > block.start && c.startOffset < block.end);
    expect(covering.length).toBeGreaterThan(0);
    expect((covering[0] as ChunkDraft).startOffset).toBeLessThanOrEqual(block.start);
    expect((covering[covering.length - 1] as ChunkDraft).endOffset).toBeGreaterThanOrEqual(block.end);
  }
}

// ---------------------------------------------------------------------------------------------

describe('chunkDocument: sizes, tokens and offsets', () => {
  it('never exceeds chunkTokens and sums chunk tokens to the tokens of the blocks', () => {
    const paras = paragraphs(11, 60);
    const doc = docFromMarkdown(paras.join('\n\n'));
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 16 });
    expectWellFormed(doc, result, 128);
    const blockTokens = doc.blocks.reduce((total, block) => total + countTokens(blockText(doc, block)), 0);
    expect(result.tokens).toBe(blockTokens);
    expect(result.chunks.length).toBeGreaterThan(10);
  });

  it('averages around 60% of chunkTokens on ordinary prose and keeps small chunks rare', () => {
    const doc = docFromMarkdown(paragraphs(12, 400).join('\n\n'));
    const result = chunkDocument(doc, { chunkTokens: 512, overlapTokens: 64 });
    const average = result.tokens / result.chunks.length;
    expect(average).toBeGreaterThan(512 * 0.45);
    expect(average).toBeLessThan(512 * 0.8);
    const small = result.chunks.filter((c) => c.tokens < 512 * 0.25).length;
    expect(small).toBeLessThanOrEqual(2);
  });

  it('splits a block larger than chunkTokens at sentence ends and keeps the token total exact', () => {
    const random = seededRandom(13);
    const huge = paragraph(random, 80);
    const doc = docFromMarkdown(['# Big', paragraph(random), huge, paragraph(random)].join('\n\n'));
    const result = chunkDocument(doc, { chunkTokens: 100, overlapTokens: 0 });
    expectWellFormed(doc, result, 100);
    const blockTokens = doc.blocks.reduce((total, block) => total + countTokens(blockText(doc, block)), 0);
    expect(result.tokens).toBe(blockTokens);
    const hugeStart = doc.text.indexOf(huge);
    const inside = result.chunks.filter((c) => c.startOffset >= hugeStart && c.endOffset <= hugeStart + huge.length);
    expect(inside.length).toBeGreaterThanOrEqual(3);
    for (const chunk of inside) {
      // Cut between sentences: each piece of the huge paragraph starts a sentence and ends one.
      expect(ownText(doc, chunk)).toMatch(/^[A-Z]/);
      expect(ownText(doc, chunk)).toMatch(/[.?]$/);
    }
  });

  it('cuts at word boundaries when a sentence is too long, and hard-splits unbroken text', () => {
    const random = seededRandom(14);
    const words = Array.from({ length: 600 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
    const unbroken = 'x'.repeat(5000);
    const doc = docFromMarkdown(`${words}\n\n${unbroken}`);
    const result = chunkDocument(doc, { chunkTokens: 64, overlapTokens: 8 });
    expectWellFormed(doc, result, 64);
    const wordsEnd = words.length;
    for (const chunk of result.chunks.filter((c) => c.endOffset <= wordsEnd)) {
      const own = ownText(doc, chunk);
      // Whole words only: the own text starts and ends with a complete vocabulary word.
      expect(WORDS).toContain(own.split(' ')[0]);
      expect(WORDS).toContain(own.split(' ').at(-1));
    }
    const hard = result.chunks.filter((c) => c.startOffset >= doc.text.indexOf(unbroken));
    expect(hard.length).toBeGreaterThan(1);
    expect(hard.map((c) => ownText(doc, c)).join('')).toBe(unbroken);
  });

  it('handles an empty document and a document without blocks', () => {
    expect(
      chunkDocument({ text: '', blocks: [], pageCount: null, warnings: [] }, { chunkTokens: 64, overlapTokens: 8 }),
    ).toEqual({
      chunks: [],
      tokens: 0,
    });
    const text = '  Plain text without any block.  ';
    const result = chunkDocument(
      { text, blocks: [], pageCount: null, warnings: [] },
      { chunkTokens: 64, overlapTokens: 8 },
    );
    expect(result.chunks).toHaveLength(1);
    expect(result.chunks[0]?.content).toBe('Plain text without any block.');
  });

  it('is deterministic', () => {
    const doc = docFromMarkdown(paragraphs(15, 80).join('\n\n'));
    const a = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 16 });
    const b = chunkDocument(structuredClone(doc), { chunkTokens: 128, overlapTokens: 16 });
    expect(b).toEqual(a);
  });

  it('rejects impossible options', () => {
    const doc = docFromMarkdown('Some text.');
    expect(() => chunkDocument(doc, { chunkTokens: 0, overlapTokens: 0 })).toThrow(KbError);
    expect(() => chunkDocument(doc, { chunkTokens: 64, overlapTokens: 64 })).toThrow(KbError);
    expect(() => chunkDocument(doc, { chunkTokens: 64, overlapTokens: -1 })).toThrow(KbError);
  });
});

describe('chunkDocument: structure', () => {
  const random = seededRandom(21);
  const markdown = [
    '# Guide',
    paragraph(random),
    '## Install',
    ...Array.from({ length: 12 }, () => paragraph(random)),
    '## Configure',
    '### Files',
    paragraph(random),
    '- first item of a list',
    '- second item of a list',
    ...Array.from({ length: 6 }, () => paragraph(random)),
    '# Reference',
    paragraph(random),
  ].join('\n\n');
  const doc = docFromMarkdown(markdown);
  const result = chunkDocument(doc, { chunkTokens: 160, overlapTokens: 24 });

  it('starts a chunk at every heading and keeps a heading with the text after it', () => {
    expectWellFormed(doc, result, 160);
    const headings = doc.blocks.filter((b) => b.kind === 'heading');
    for (const heading of headings) {
      const chunk = result.chunks.find((c) => c.startOffset <= heading.start && c.endOffset >= heading.end);
      expect(chunk).toBeDefined();
      // Either the heading starts the chunk, or it directly follows another heading that does.
      const before = doc.text.slice((chunk as ChunkDraft).startOffset, heading.start);
      const precedingBlocks = doc.blocks.filter(
        (b) => b.start >= (chunk as ChunkDraft).startOffset && b.end <= heading.start,
      );
      expect(precedingBlocks.every((b) => b.kind === 'heading')).toBe(true);
      expect(before.length === 0 || precedingBlocks.length > 0).toBe(true);
      // The heading is never the last thing in its chunk.
      expect((chunk as ChunkDraft).endOffset).toBeGreaterThan(heading.end);
    }
  });

  it('records the heading path', () => {
    const install = result.chunks.filter((c) => ownText(doc, c).startsWith('Install'));
    expect(install[0]?.metadata.headings).toEqual(['Guide', 'Install']);
    const files = result.chunks.find((c) => ownText(doc, c).startsWith('Configure'));
    expect(files?.metadata.headings).toEqual(['Guide', 'Configure', 'Files']);
    const reference = result.chunks.at(-1);
    expect(reference?.metadata.headings).toEqual(['Reference']);
    // Chunks in the middle of a section inherit its path.
    const installEnd = doc.text.indexOf('Configure');
    const middle = result.chunks.filter((c) => c.startOffset > doc.text.indexOf('Install') && c.endOffset < installEnd);
    expect(middle.length).toBeGreaterThan(1);
    for (const chunk of middle) expect(chunk.metadata.headings).toEqual(['Guide', 'Install']);
  });

  it('sets page from the first block and flags OCR text', () => {
    const paras = paragraphs(22, 12);
    const paged = docFromMarkdown(paras.join('\n\n'), (i) => ({ page: 1 + Math.floor(i / 3), ocr: i === 7 }));
    const chunks = chunkDocument(paged, { chunkTokens: 96, overlapTokens: 0 }).chunks;
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      const first = paged.blocks.find((b) => b.end > chunk.startOffset) as TextBlock;
      expect(chunk.page).toBe(first.page);
      const blocks = paged.blocks.filter((b) => b.end > chunk.startOffset && b.start < chunk.endOffset);
      expect(chunk.metadata.ocr === true).toBe(blocks.some((b) => b.ocr === true));
    }
    expect(chunks.some((c) => c.metadata.ocr === true)).toBe(true);
    const plain = chunkDocument(doc, { chunkTokens: 160, overlapTokens: 0 }).chunks;
    expect(plain.every((c) => c.page === null && c.metadata.ocr === undefined)).toBe(true);
  });
});

describe('chunkDocument: rows and fields', () => {
  /**
   * Two sheets of rows, each with its header line in the text before the rows (as the CSV parser
   * lays a table out), and with `sheetHeadings` a heading naming the sheet first (as the XLSX parser).
   */
  function workbook(sheetHeadings = false): ParsedDocument {
    let text = '';
    const blocks: TextBlock[] = [];
    const random = seededRandom(31);
    for (const [sheet, header, rows] of [
      ['Customers', 'id,name,city,notes', 120],
      ['Orders', 'order,customer,amount,comment', 90],
    ] as const) {
      if (text !== '') text += '\n\n';
      if (sheetHeadings) {
        blocks.push({
          kind: 'heading',
          level: 1,
          start: text.length,
          end: text.length + sheet.length,
          page: null,
          section: sheet,
        });
        text += `${sheet}\n\n`;
      }
      text += header;
      for (let i = 0; i < rows; i++) {
        text += '\n';
        const row = `${i},${WORDS[Math.floor(random() * WORDS.length)]},${Math.floor(random() * 1e5)},${sentence(random)}`;
        blocks.push({
          kind: 'row',
          start: text.length,
          end: text.length + row.length,
          page: null,
          header,
          section: sheet,
        });
        text += row;
      }
    }
    return { text, blocks, pageCount: null, warnings: [] };
  }

  it('repeats the header in every chunk of rows and never mixes sheets', () => {
    const doc = workbook();
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 16 });
    expectWellFormed(doc, result, 128);
    expect(result.chunks.length).toBeGreaterThan(6);
    for (const chunk of result.chunks) {
      const rows = doc.blocks.filter((b) => b.start >= chunk.startOffset && b.end <= chunk.endOffset);
      const sheets = new Set(rows.map((b) => b.section));
      expect(sheets.size).toBe(1);
      const sheet = rows[0]?.section;
      expect(chunk.metadata.sheet).toBe(sheet);
      const header = sheet === 'Customers' ? 'id,name,city,notes' : 'order,customer,amount,comment';
      expect(chunk.content.startsWith(`${header}\n`)).toBe(true);
      // The own range starts and ends on whole rows.
      expect(rows[0]?.start).toBe(chunk.startOffset);
      expect(rows.at(-1)?.end).toBe(chunk.endOffset);
    }
    // The header line is not counted: chunk tokens sum to the rows' own tokens.
    const rowTokens = doc.blocks.reduce((total, block) => total + countTokens(blockText(doc, block)), 0);
    expect(result.tokens).toBe(rowTokens);
  });

  it('keeps a sheet-name heading with the first rows, whose header is already in the text', () => {
    const doc = workbook(true);
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 16 });
    expectWellFormed(doc, result, 128);
    for (const sheet of ['Customers', 'Orders']) {
      const header = sheet === 'Customers' ? 'id,name,city,notes' : 'order,customer,amount,comment';
      const chunks = result.chunks.filter((c) => c.metadata.sheet === sheet);
      expect(chunks.length).toBeGreaterThan(2);
      const first = chunks[0] as ChunkDraft;
      expect(first.content.startsWith(`${sheet}\n\n${header}\n`)).toBe(true);
      expect(first.metadata.headings).toEqual([sheet]);
      for (const chunk of chunks.slice(1)) {
        expect(chunk.content.startsWith(`${header}\n`)).toBe(true);
        expect(chunk.metadata.headings).toEqual([sheet]);
      }
      // The header appears once per chunk.
      for (const chunk of chunks) expect(chunk.content.split(header).length).toBe(2);
    }
    // No chunk is a heading alone.
    expect(result.chunks.every((c) => c.content !== 'Customers' && c.content !== 'Orders')).toBe(true);
  });

  it('carries whole rows as overlap within a sheet, never across sheets', () => {
    const doc = workbook();
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 40 });
    let overlapped = 0;
    for (let i = 1; i < result.chunks.length; i++) {
      const chunk = result.chunks[i] as ChunkDraft;
      const previous = result.chunks[i - 1] as ChunkDraft;
      const header = (chunk.content.split('\n')[0] as string) + '\n';
      const carried = chunk.content.slice(header.length, chunk.content.length - ownText(doc, chunk).length);
      if (chunk.metadata.sheet !== previous.metadata.sheet) {
        expect(carried).toBe('');
        continue;
      }
      if (carried === '') continue;
      overlapped += 1;
      const rowsOfPrevious = doc.blocks
        .filter((b) => b.start >= previous.startOffset && b.end <= previous.endOffset)
        .map((b) => blockText(doc, b));
      const carriedRows = carried.trim().split('\n');
      expect(rowsOfPrevious.slice(-carriedRows.length)).toEqual(carriedRows);
    }
    expect(overlapped).toBeGreaterThan(3);
  });

  it('names the common JSON path of the fields in a chunk', () => {
    let text = '';
    const blocks: TextBlock[] = [];
    const add = (section: string, line: string): void => {
      if (text !== '') text += '\n';
      blocks.push({ kind: 'field', start: text.length, end: text.length + line.length, page: null, section });
      text += line;
    };
    for (let i = 0; i < 30; i++) {
      add(`$.users[${i}]`, `$.users[${i}].name: user number ${i} with a fairly long descriptive name`);
      add(`$.users[${i}]`, `$.users[${i}].city: the city where user ${i} lives and works`);
    }
    for (let i = 0; i < 10; i++) add('$.settings', `$.settings.option${i}: value of option ${i}`);
    const doc: ParsedDocument = { text, blocks, pageCount: null, warnings: [] };
    const result = chunkDocument(doc, { chunkTokens: 96, overlapTokens: 0 });
    expectWellFormed(doc, result, 96);
    for (const chunk of result.chunks) {
      const sections = blocks
        .filter((b) => b.start >= chunk.startOffset && b.end <= chunk.endOffset)
        .map((b) => b.section);
      const path = chunk.metadata.path as string;
      expect(typeof path).toBe('string');
      for (const section of sections) expect(section?.startsWith(path)).toBe(true);
    }
    const last = result.chunks.at(-1) as ChunkDraft;
    expect(last.metadata.path).toBe('$.settings');
    // Cuts prefer the point where the paths part early: no chunk mixes users and settings.
    for (const chunk of result.chunks) {
      const own = ownText(doc, chunk);
      expect(own.includes('$.users') && own.includes('$.settings')).toBe(false);
    }
  });
});

describe('chunkDocument: overlap', () => {
  const random = seededRandom(41);
  const markdown = [
    '# One',
    ...Array.from({ length: 15 }, () => paragraph(random)),
    '# Two',
    ...Array.from({ length: 15 }, () => paragraph(random)),
  ].join('\n\n');
  const doc = docFromMarkdown(markdown);

  it('starts each chunk with the tail of the previous one in the same section, cut at a word start', () => {
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 24 });
    let overlapped = 0;
    for (let i = 1; i < result.chunks.length; i++) {
      const chunk = result.chunks[i] as ChunkDraft;
      const previous = result.chunks[i - 1] as ChunkDraft;
      const own = ownText(doc, chunk);
      const carried = chunk.content.slice(0, chunk.content.length - own.length);
      if (own.startsWith('Two')) {
        expect(carried).toBe('');
        continue;
      }
      expect(carried.length).toBeGreaterThan(0);
      overlapped += 1;
      const tail = carried.trimEnd();
      expect(ownText(doc, previous).endsWith(tail)).toBe(true);
      expect(countTokens(tail)).toBeLessThanOrEqual(24);
      expect(countTokens(tail)).toBeGreaterThanOrEqual(6);
      // Starts at a word: the character before it in the document is whitespace.
      const at = chunk.startOffset - carried.length;
      expect(doc.text[at - 1]).toMatch(/\s/);
      expect(tail).toMatch(/^[A-Za-z]/);
      // The overlap is not counted in the chunk's tokens: they are those of its own blocks.
      const blocks = doc.blocks.filter((b) => b.start >= chunk.startOffset && b.end <= chunk.endOffset);
      expect(chunk.tokens).toBe(blocks.reduce((total, b) => total + countTokens(blockText(doc, b)), 0));
    }
    expect(overlapped).toBeGreaterThan(5);
  });

  it('has no overlap after a heading or when overlapTokens is 0', () => {
    const result = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 24 });
    for (const chunk of result.chunks) {
      if (ownText(doc, chunk).startsWith('One') || ownText(doc, chunk).startsWith('Two')) {
        expect(chunk.content).toBe(ownText(doc, chunk));
      }
    }
    const none = chunkDocument(doc, { chunkTokens: 128, overlapTokens: 0 });
    for (const chunk of none.chunks) expect(chunk.content).toBe(ownText(doc, chunk));
  });
});

describe('chunkDocument: content-defined boundaries', () => {
  const options = { chunkTokens: 192, overlapTokens: 24 };
  const paras = paragraphs(51, 200);
  const original = chunkDocument(docFromMarkdown(paras.join('\n\n')), options);

  it('produces about a hundred chunks for the 200-paragraph document', () => {
    expect(original.chunks.length).toBeGreaterThan(70);
    expect(original.chunks.length).toBeLessThan(140);
  });

  it('changes at most two chunks when a paragraph is inserted at the start, then re-synchronises', () => {
    const random = seededRandom(52);
    for (let trial = 0; trial < 5; trial++) {
      const edited = chunkDocument(docFromMarkdown([paragraph(random), ...paras].join('\n\n')), options);
      const { added, removed } = changedChunks(original, edited);
      expect(added).toBeLessThanOrEqual(2);
      expect(removed).toBeLessThanOrEqual(2);
      // Re-synchronised: after the first changed chunks, the sequence of chunks is identical.
      const tail = original.chunks.slice(2).map((c) => c.contentHash);
      const editedHashes = edited.chunks.map((c) => c.contentHash);
      const at = editedHashes.indexOf(tail[0] as string);
      expect(at).toBeGreaterThan(-1);
      expect(at).toBeLessThanOrEqual(3);
      expect(editedHashes.slice(at)).toEqual(tail);
    }
  });

  it('changes at most two chunks when a sentence in the middle is edited', () => {
    // A sentence inside a paragraph in the middle of the document. The chunk holding it changes; when
    // the sentence lies in that chunk's last `overlapTokens` tokens, the next chunk (which repeats that
    // tail as its overlap) changes too, hence "at most two".
    const random = seededRandom(53);
    const edited = chunkDocument(docFromMarkdown(editSentence(paras, 100, 1, random).join('\n\n')), options);
    const { added, removed } = changedChunks(original, edited);
    expect(added).toBeGreaterThanOrEqual(1);
    expect(added).toBeLessThanOrEqual(2);
    expect(removed).toBeLessThanOrEqual(2);
  });

  it('keeps most single-sentence edits anywhere to at most two changed chunks', () => {
    // Editing the first sentence of a paragraph changes the hash of the boundary before it; when that
    // boundary was (or becomes) a cut point, neighbouring cuts can move too. That is rare, and even then
    // the change stays local: never more than four chunks.
    const random = seededRandom(54);
    let local = 0;
    const trials = 40;
    for (let trial = 0; trial < trials; trial++) {
      const index = Math.floor(random() * paras.length);
      const which = Math.floor(random() * 4);
      const edited = chunkDocument(docFromMarkdown(editSentence(paras, index, which, random).join('\n\n')), options);
      const { added, removed } = changedChunks(original, edited);
      expect(added).toBeLessThanOrEqual(4);
      expect(removed).toBeLessThanOrEqual(4);
      if (added <= 2 && removed <= 2) local += 1;
    }
    expect(local).toBeGreaterThanOrEqual(trials * 0.9);
  });

  it('changes only the removed chunks when a section is deleted', () => {
    const random = seededRandom(55);
    const sections: string[][] = [];
    for (let s = 0; s < 12; s++) {
      sections.push([`## Section ${s} ${sentence(random)}`, ...Array.from({ length: 10 }, () => paragraph(random))]);
    }
    const fullDoc = docFromMarkdown(sections.flat().join('\n\n'));
    const full = chunkDocument(fullDoc, options);
    const without = chunkDocument(
      docFromMarkdown(
        sections
          .filter((_, s) => s !== 6)
          .flat()
          .join('\n\n'),
      ),
      options,
    );
    const { added, removed } = changedChunks(full, without);
    const from = fullDoc.text.indexOf('Section 6 ');
    const to = fullDoc.text.indexOf('Section 7 ');
    const sectionChunks = full.chunks.filter((c) => c.startOffset >= from && c.endOffset <= to).length;
    expect(sectionChunks).toBeGreaterThan(2);
    // Sections are separated by headings, which always cut: the neighbours are untouched.
    expect(added).toBe(0);
    expect(removed).toBe(sectionChunks);
  });

  it('keeps the damage local when paragraphs in the middle of a long section are deleted', () => {
    const shorter = paras.slice(0, 90).concat(paras.slice(94));
    const edited = chunkDocument(docFromMarkdown(shorter.join('\n\n')), options);
    const { added, removed } = changedChunks(original, edited);
    expect(added).toBeLessThanOrEqual(3);
    expect(removed).toBeLessThanOrEqual(6);
  });

  it('changes at most three of about a thousand chunks when one paragraph is rewritten', () => {
    const big = paragraphs(56, 2000);
    const before = chunkDocument(docFromMarkdown(big.join('\n\n')), options);
    expect(before.chunks.length).toBeGreaterThan(800);
    const random = seededRandom(57);
    const rewritten = big.slice();
    rewritten[1000] = paragraph(random);
    const after = chunkDocument(docFromMarkdown(rewritten.join('\n\n')), options);
    const { added, removed } = changedChunks(before, after);
    expect(added).toBeGreaterThanOrEqual(1);
    expect(added).toBeLessThanOrEqual(3);
    expect(removed).toBeLessThanOrEqual(3);
  });

  it('re-synchronises inside one huge paragraph when a sentence is inserted at its start', () => {
    const random = seededRandom(58);
    const huge = Array.from({ length: 300 }, () => sentence(random));
    const before = chunkDocument(docFromMarkdown(huge.join(' ')), options);
    const after = chunkDocument(docFromMarkdown([sentence(random), ...huge].join(' ')), options);
    expect(before.chunks.length).toBeGreaterThan(20);
    const { added, removed } = changedChunks(before, after);
    expect(added).toBeLessThanOrEqual(2);
    expect(removed).toBeLessThanOrEqual(2);
  });
});
