import { Readable } from 'node:stream';
import { KbError } from '../errors/kb-error.ts';
import { outboundFetch } from '../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { ItemMatcher } from './item-matcher.ts';
import { parseSitemap } from './sitemap.ts';
import type { ListedFailure, SourceEntry, SourceReader } from './source-reader.ts';

/** A sitemap index may point at this many sitemaps (one level deep); more are left out. */
const MAX_SITEMAPS = 50;

/**
 * Web pages: a list of URLs, or the pages a sitemap lists (a sitemap index is followed one level).
 * Every request goes through the outbound guard (no loopback, private or link-local address
 * unless the operator allows them; redirects re-checked), bounded by the upload size limit and
 * `timeoutMs`. A page already synced is asked for with its validators (`If-None-Match`,
 * `If-Modified-Since`); a 304 costs nothing more. Pages are typed like uploads (HTML is text).
 */
export function createWebReader(input: {
  readonly urls?: readonly string[] | undefined;
  readonly sitemap?: string | undefined;
  readonly matcher: ItemMatcher;
  readonly policy: OutboundPolicy;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}): SourceReader {
  const entry = (url: string): SourceEntry => ({
    key: url,
    sizeBytes: null,
    mtimeMs: null,
    etag: null,
    lastModified: null,
  });

  async function fetchSitemap(url: string) {
    let response: Awaited<ReturnType<typeof outboundFetch>>;
    try {
      response = await outboundFetch({ url, timeoutMs: input.timeoutMs, maxBytes: input.maxBytes }, input.policy);
    } catch (error) {
      if (error instanceof KbError && error.code === 'outbound-refused') throw error;
      throw new KbError('source-unreachable', `The sitemap ${url} cannot be fetched: ${(error as Error).message}`);
    }
    if (response.status !== 200) {
      throw new KbError('source-unreachable', `The sitemap ${url} answered ${response.status}.`);
    }
    const parsed = parseSitemap(response.body.toString('utf8'));
    if (!parsed) throw new KbError('source-unreachable', `${url} is not a sitemap (no <urlset> or <sitemapindex>).`);
    return parsed;
  }

  async function pagesOfSitemap(url: string): Promise<string[]> {
    const top = await fetchSitemap(url);
    const pages = [...top.pages];
    for (const nested of top.sitemaps.slice(0, MAX_SITEMAPS)) pages.push(...(await fetchSitemap(nested)).pages);
    return pages;
  }

  return {
    async *list(): AsyncGenerator<SourceEntry | ListedFailure> {
      const pages = input.sitemap !== undefined ? await pagesOfSitemap(input.sitemap) : [...(input.urls ?? [])];
      const seen = new Set<string>();
      for (const page of pages) {
        if (seen.has(page) || !input.matcher(page)) continue;
        seen.add(page);
        if (!/^https?:\/\//i.test(page)) {
          yield { failure: { item: page, code: 'validation-error', detail: 'Not an http(s) URL.' } };
          continue;
        }
        yield entry(page);
      }
    },

    async read(item, known) {
      const conditional = known && known.sha256 !== null;
      const headers: Record<string, string> = {};
      if (conditional && known.etag) headers['if-none-match'] = known.etag;
      if (conditional && known.lastModified) headers['if-modified-since'] = known.lastModified;
      const response = await outboundFetch(
        { url: item.key, headers, timeoutMs: input.timeoutMs, maxBytes: input.maxBytes },
        input.policy,
      );
      if (response.status === 304 && conditional) return 'not-modified';
      if (response.status !== 200) {
        throw new KbError('source-unreachable', `GET ${item.key} answered ${response.status}.`);
      }
      const body = response.body;
      return {
        open: () => Readable.from([body]),
        etag: response.headers.etag ?? null,
        lastModified: response.headers['last-modified'] ?? null,
        contentType: response.headers['content-type'] ?? null,
      };
    },
  };
}
