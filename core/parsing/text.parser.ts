import { createDocumentBuilder, type OutputLimits, splitParagraphs } from './document-builder.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { decodeText } from './text-decode.ts';

/** Plain text: one `paragraph` block per run of text between blank lines. */
export function parseText(bytes: Uint8Array, limits?: OutputLimits): ParsedDocument {
  const builder = createDocumentBuilder(limits);
  for (const paragraph of splitParagraphs(decodeText(bytes))) builder.block('paragraph', paragraph);
  return builder.build();
}
