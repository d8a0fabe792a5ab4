/** Sentence-level edits of seeded prose, shared by the chunker and versioning tests. */
import { expect } from 'vitest';
import type { ProseDocument } from './seeded-prose.ts';

/** Where a sentence sits: section, paragraph and position in the paragraph. */
export interface SentenceAt {
  s: number;
  p: number;
  k: number;
  text: string;
}

export function sentences(doc: ProseDocument): SentenceAt[] {
  return doc.sections.flatMap((section, s) =>
    section.paragraphs.flatMap((paragraph, p) => paragraph.map((text, k) => ({ s, p, k, text }))),
  );
}

/** The same sentence with one word swapped: a typical small correction. */
export function reword(text: string): string {
  const edited = text.replace(/\b([a-z]{6,})\b/, (word) => (word === 'surveyed' ? 'measured' : 'surveyed'));
  expect(edited).not.toBe(text);
  return edited;
}
