import { Readable } from 'node:stream';
import { KbError } from '../errors/kb-error.ts';
import { outboundFetch } from '../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { eventLoopTurns } from '../util/event-loop-turns.ts';
import type { ItemMatcher } from './item-matcher.ts';
import { NotASitemap, readSitemap, type SitemapEntry } from './sitemap.ts';
import type { ListedFailure, SourceEntry, SourceReader } from './source-reader.ts';

/** A sitemap index may point at this many sitemaps (one level deep); more are left out, and the run says so. */
export const MAX_SITEMAPS = 50;
/** Pages one run takes from a sitemap (as many as a URL list may hold); more are left out, and the run says so. */
export const MAX_SITEMAP_PAGES = 1000;
/** A page URL longer than this (the sitemap protocol's bound) is a failing item. */
const MAX_URL_CHARS = 2048;

/**
 * Web pages: a list of URLs, or the pages a sitemap lists (a sitemap index is followed one level,
 * to at most {@link MAX_SITEMAPS} sitemaps; at most {@link MAX_SITEMAP_PAGES} distinct pages
 * matching the patterns are taken, and a failing item `source-capped` naming the sitemap says
 * that more were left out). Sitemaps are read as a stream, with turns of the event loop.
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

  async function fetchSitemap(url: string): Promise<Buffer> {
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
    return response.body;
  }

  /** The entries of a sitemap, a chunk's worth at a time. */
  async function* entriesOf(url: string): AsyncGenerator<SitemapEntry[]> {
    const body = await fetchSitemap(url);
    try {
      yield* readSitemap(body);
    } catch (error) {
      if (error instanceof NotASitemap) {
        throw new KbError('source-unreachable', `${url} is not a sitemap. ${error.message}`);
      }
      throw error;
    }
  }

  /**
   * The pages of the sitemap, then those of the sitemaps it points at (a sitemap index),
   * unfiltered, a chunk's worth at a time.
   */
  async function* pagesOfSitemap(url: string, capped: (failure: ListedFailure) => void): AsyncGenerator<string[]> {
    const nested: string[] = [];
    read: for await (const entries of entriesOf(url)) {
      const pages: string[] = [];
      for (const entry of entries) {
        if (entry.kind === 'page') pages.push(entry.loc);
        else if (nested.length < MAX_SITEMAPS) nested.push(entry.loc);
        else {
          capped({
            failure: {
              item: url,
              code: 'source-capped',
              detail: `The sitemap index lists more than ${MAX_SITEMAPS} sitemaps; only the first ${MAX_SITEMAPS} are read.`,
            },
          });
          break read;
        }
      }
      yield pages;
    }
    for (const sitemap of nested) {
      for await (const entries of entriesOf(sitemap)) {
        yield entries.filter((entry) => entry.kind === 'page').map((entry) => entry.loc);
      }
    }
  }

  return {
    async *list(): AsyncGenerator<SourceEntry | ListedFailure> {
      const turns = eventLoopTurns();
      // The distinct matching pages, read to the end before any is given, so that what was left
      // out comes first in the run's errors (which keep the first entries).
      const taken = new Set<string>();
      const notes: ListedFailure[] = [];
      const batches =
        input.sitemap !== undefined
          ? pagesOfSitemap(input.sitemap, (note) => notes.push(note))
          : [[...(input.urls ?? [])]];
      read: for await (const batch of batches) {
        for (const page of batch) {
          const turn = turns.turn();
          if (turn) await turn;
          if (taken.has(page) || !input.matcher(page)) continue;
          if (taken.size >= MAX_SITEMAP_PAGES && input.sitemap !== undefined) {
            notes.push({
              failure: {
                item: input.sitemap,
                code: 'source-capped',
                detail: `The sitemap lists more than ${MAX_SITEMAP_PAGES} pages matching the patterns; this run takes the first ${MAX_SITEMAP_PAGES} and leaves the others out.`,
              },
            });
            break read;
          }
          taken.add(page);
        }
      }
      yield* notes;
      for (const page of taken) {
        if (page.length > MAX_URL_CHARS) {
          yield {
            failure: {
              item: `${page.slice(0, 200)}…`,
              code: 'validation-error',
              detail: `The URL is longer than ${MAX_URL_CHARS} characters.`,
            },
          };
        } else if (!/^https?:\/\//i.test(page)) {
          yield { failure: { item: page, code: 'validation-error', detail: 'Not an http(s) URL.' } };
        } else yield entry(page);
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
