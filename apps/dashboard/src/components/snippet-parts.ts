/** One run of a search snippet: text as the document has it, and whether the API marked it as a match. */
export interface SnippetPart {
  readonly text: string;
  readonly marked: boolean;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** The text of an HTML-escaped run (the five entities the API writes), as plain text. */
function plainText(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (whole, name: string) => ENTITIES[name] ?? whole);
}

/**
 * Splits a highlight from the search API (text HTML-escaped, matches wrapped in `<em>`) into runs of
 * plain text, so the dashboard shows it as text and never as HTML.
 */
export function snippetParts(snippet: string): SnippetPart[] {
  return snippet
    .split(/<em>(.*?)<\/em>/g)
    .map((part, i) => ({ text: plainText(part), marked: i % 2 === 1 }))
    .filter((part) => part.text !== '');
}
