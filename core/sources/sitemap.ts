import { XMLParser } from 'fast-xml-parser';

/** What a sitemap lists: pages (`<urlset>`) or further sitemaps (`<sitemapindex>`). */
export interface SitemapEntries {
  readonly pages: string[];
  readonly sitemaps: string[];
}

const parser = new XMLParser({ ignoreAttributes: true, processEntities: true, parseTagValue: false });

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

const locs = (entries: unknown): string[] =>
  asArray(entries as { loc?: unknown } | { loc?: unknown }[])
    .map((entry) => (entry && typeof entry === 'object' ? entry.loc : undefined))
    .filter((loc): loc is string => typeof loc === 'string')
    .map((loc) => loc.trim())
    .filter(Boolean);

/** The `<loc>` entries of a sitemap (sitemaps.org protocol); null when the text is not one. */
export function parseSitemap(xml: string): SitemapEntries | null {
  let doc: Record<string, { url?: unknown; sitemap?: unknown } | undefined>;
  try {
    doc = parser.parse(xml) as typeof doc;
  } catch {
    return null;
  }
  if (doc.urlset === undefined && doc.sitemapindex === undefined) return null;
  return { pages: locs(doc.urlset?.url), sitemaps: locs(doc.sitemapindex?.sitemap) };
}
