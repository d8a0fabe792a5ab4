/**
 * Sitemaps (sitemaps.org protocol) read as a stream: a small tokenizer that walks the text once,
 * chunk by chunk, and hands out the `<loc>` of each `<url>` (pages) or `<sitemap>` (further
 * sitemaps) as soon as it is read, so a large sitemap is neither held as a tree nor parsed in one
 * go on the event loop, and its reader can stop at any entry.
 *
 * Markup is recognised, not validated: elements are known by their local name (a namespace prefix
 * is ignored), processing instructions and comments are skipped, CDATA is text. Nothing is ever
 * fetched or expanded: a document type declaration (`<!DOCTYPE …>`, where external entities and
 * entity expansion "billion laughs" live) makes the text no sitemap; only the five predefined
 * entities and character references are decoded in a `<loc>`.
 */
import { eventLoopTurns } from '../util/event-loop-turns.ts';

/** One entry of a sitemap: a page of a `<urlset>`, or a sitemap of a `<sitemapindex>`. */
export interface SitemapEntry {
  readonly kind: 'page' | 'sitemap';
  readonly loc: string;
}

/** The text is not a sitemap, or not one this reader takes; the message says why. */
export class NotASitemap extends Error {}

/** Characters of a `<loc>` kept: a longer one is given cut there (and is longer than any URL taken). */
export const MAX_LOC_CHARS = 4096;
/** A tag, comment, processing instruction or CDATA section longer than this makes the text no sitemap. */
const MAX_MARKUP_CHARS = 1024 * 1024;
/** Elements nested deeper than this make the text no sitemap (the protocol needs three levels). */
const MAX_DEPTH = 64;
/** Bytes decoded and scanned at a time by {@link readSitemap}. */
const CHUNK_BYTES = 64 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeText(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);/g, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name] ?? whole;
  });
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/** What ends an element's name in its tag: white space, `/` or `>`. */
const NAME_ENDS = new Set([0x20, 0x09, 0x0a, 0x0d, 0x2f, 0x3e]);

/**
 * The tokenizer: `push` text as it arrives, then `end`. Each returns the entries completed by
 * that text. Throws {@link NotASitemap} as soon as the text cannot be one.
 */
export class SitemapScanner {
  private pending = '';
  /** Where in `pending` to look again for the end of an unfinished comment, PI or CDATA section. */
  private resumeAt = 0;
  private readonly stack: string[] = [];
  private root: 'urlset' | 'sitemapindex' | null = null;
  /** The text of the `<loc>` being read, or null outside one. */
  private loc: string[] | null = null;
  private locChars = 0;

  /** `urlset` or `sitemapindex` once the root element is read. */
  get kind(): 'urlset' | 'sitemapindex' | null {
    return this.root;
  }

  push(text: string): SitemapEntry[] {
    const entries: SitemapEntry[] = [];
    const s = this.pending + text;
    let i = 0;
    for (;;) {
      const lt = s.indexOf('<', i);
      this.text(s, i, lt < 0 ? s.length : lt);
      if (lt < 0) {
        i = s.length;
        break;
      }
      const end = this.markup(s, lt, entries);
      if (end < 0) {
        // Unfinished markup: kept for the next text (`resumeAt` counts from its `<`).
        i = lt;
        break;
      }
      i = end;
    }
    if (s.length - i > MAX_MARKUP_CHARS) {
      throw new NotASitemap(`It holds markup longer than ${MAX_MARKUP_CHARS} characters.`);
    }
    if (i === s.length) this.resumeAt = 0;
    this.pending = s.slice(i);
    return entries;
  }

  end(): SitemapEntry[] {
    if (this.pending.trim() !== '') throw new NotASitemap('It ends inside a tag.');
    if (this.root === null) throw new NotASitemap('It has no <urlset> or <sitemapindex>.');
    return [];
  }

  private text(s: string, from: number, to: number): void {
    if (this.loc !== null && from < to) this.appendLoc(s.slice(from, to));
  }

  private appendLoc(piece: string): void {
    if (this.loc === null || this.locChars > MAX_LOC_CHARS) return;
    this.loc.push(piece);
    this.locChars += piece.length;
  }

  /** Reads the markup at `s[lt]` (`<`); returns where it ends, or -1 when it is not complete yet. */
  private markup(s: string, lt: number, entries: SitemapEntry[]): number {
    const next = s[lt + 1];
    if (next === undefined) return -1;
    if (next === '?') return this.skipTo(s, lt, '?>', 2);
    if (next === '!') {
      const head = s.slice(lt, lt + 9);
      if (head.startsWith('<!--')) return this.skipTo(s, lt, '-->', 4);
      if (head.startsWith('<![CDATA[')) {
        const close = this.find(s, lt, ']]>', 9);
        if (close < 0) return -1;
        // Literal text: its `&` stays one when the `<loc>` is decoded.
        this.appendLoc(s.slice(lt + 9, close).replaceAll('&', '&amp;'));
        return close + 3;
      }
      // Too little arrived yet to tell a comment or CDATA section from a declaration.
      if (head.length < 9 && ('<!--'.startsWith(head) || '<![CDATA['.startsWith(head))) return -1;
      throw this.declaration();
    }
    const close = tagEnd(s, lt + 1);
    if (close < 0) return -1;
    if (next === '/') this.endTag(localName(s.slice(lt + 2, close).trim()), entries);
    else {
      let nameEnd = lt + 1;
      while (nameEnd < close && !NAME_ENDS.has(s.charCodeAt(nameEnd))) nameEnd += 1;
      if (nameEnd === lt + 1) throw new NotASitemap('It holds a tag without a name.');
      this.startTag(localName(s.slice(lt + 1, nameEnd)), s.charCodeAt(close - 1) === 0x2f);
    }
    return close + 1;
  }

  private declaration(): NotASitemap {
    return new NotASitemap(
      'It holds a document type or entity declaration (<!DOCTYPE>, <!ENTITY>), which sitemaps never need; it is refused rather than expanded.',
    );
  }

  /** Skips to just past `terminator`, or -1 (remembering how far it looked) if it has not arrived. */
  private skipTo(s: string, lt: number, terminator: string, opening: number): number {
    const at = this.find(s, lt, terminator, opening);
    return at < 0 ? -1 : at + terminator.length;
  }

  /** Where `terminator` is after the `opening` characters at `lt`, or -1. */
  private find(s: string, lt: number, terminator: string, opening: number): number {
    const at = s.indexOf(terminator, lt + Math.max(opening, this.resumeAt));
    if (at < 0) this.resumeAt = Math.max(opening, s.length - lt - terminator.length + 1);
    else this.resumeAt = 0;
    return at;
  }

  private startTag(name: string, selfClosing: boolean): void {
    if (this.root === null) {
      if (name !== 'urlset' && name !== 'sitemapindex') {
        throw new NotASitemap(`Its root element is <${name.slice(0, 64)}>, not <urlset> or <sitemapindex>.`);
      }
      this.root = name;
    }
    if (selfClosing) return;
    if (this.stack.length >= MAX_DEPTH) throw new NotASitemap(`Its elements nest more than ${MAX_DEPTH} deep.`);
    this.stack.push(name);
    if (name === 'loc' && this.stack.length === 3) {
      const parent = this.stack[1];
      if ((this.root === 'urlset' && parent === 'url') || (this.root === 'sitemapindex' && parent === 'sitemap')) {
        this.loc = [];
        this.locChars = 0;
      }
    }
  }

  private endTag(name: string, entries: SitemapEntry[]): void {
    const at = this.stack.lastIndexOf(name);
    if (at < 0) return;
    if (this.loc !== null && at <= 2) {
      const text = decodeText(this.loc.join('')).trim();
      if (text !== '') entries.push({ kind: this.root === 'urlset' ? 'page' : 'sitemap', loc: text });
      this.loc = null;
    }
    this.stack.length = at;
  }
}

/** Where the tag starting at `s[from]` (after `<`) ends (its `>`, outside quoted values), or -1. */
function tagEnd(s: string, from: number): number {
  let quote = 0;
  for (let j = from; j < s.length; j += 1) {
    const c = s.charCodeAt(j);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x3e) return j;
  }
  return -1;
}

/**
 * The entries of a sitemap's bytes (UTF-8), a chunk's worth at a time, with turns of the event
 * loop between chunks. Throws {@link NotASitemap}. The caller may stop at any chunk.
 */
export async function* readSitemap(body: Uint8Array): AsyncGenerator<SitemapEntry[]> {
  const scanner = new SitemapScanner();
  const decoder = new TextDecoder('utf-8');
  const turns = eventLoopTurns();
  for (let at = 0; at < body.length; at += CHUNK_BYTES) {
    const chunk = body.subarray(at, Math.min(body.length, at + CHUNK_BYTES));
    const entries = scanner.push(decoder.decode(chunk, { stream: true }));
    if (entries.length > 0) yield entries;
    const turn = turns.turn();
    if (turn) await turn;
  }
  const last = [...scanner.push(decoder.decode()), ...scanner.end()];
  if (last.length > 0) yield last;
}
