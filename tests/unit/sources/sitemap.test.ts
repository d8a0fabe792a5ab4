import { describe, expect, it } from 'vitest';
import { NotASitemap, readSitemap, type SitemapEntry, SitemapScanner } from '../../../core/sources/sitemap.ts';

/** Every entry of `xml` given to the scanner in one piece. */
function scan(xml: string): SitemapEntry[] {
  const scanner = new SitemapScanner();
  return [...scanner.push(xml), ...scanner.end()];
}

/** The same, the text cut in pieces of `size` characters. */
function scanInPieces(xml: string, size: number): SitemapEntry[] {
  const scanner = new SitemapScanner();
  const entries: SitemapEntry[] = [];
  for (let i = 0; i < xml.length; i += size) entries.push(...scanner.push(xml.slice(i, i + size)));
  return [...entries, ...scanner.end()];
}

const pages = (...locs: string[]) => locs.map((loc) => ({ kind: 'page', loc }));

describe('sitemaps', () => {
  it('reads pages and nested sitemaps, and refuses what is not a sitemap', () => {
    expect(
      scan('<urlset><url><loc> https://a.example/1 </loc></url><url><loc>https://a.example/2</loc></url></urlset>'),
    ).toEqual(pages('https://a.example/1', 'https://a.example/2'));
    expect(scan('<sitemapindex><sitemap><loc>https://a.example/s.xml</loc></sitemap></sitemapindex>')).toEqual([
      { kind: 'sitemap', loc: 'https://a.example/s.xml' },
    ]);
    expect(() => scan('<html><body>nope</body></html>')).toThrow(NotASitemap);
    expect(() => scan('just text')).toThrow(/no <urlset> or <sitemapindex>/);
    expect(() => scan('<urlset><url><loc>https://a.example/1</loc></url></urlset><')).toThrow(/ends inside a tag/);
  });

  it('reads what real sitemaps hold: declaration, namespaces, comments, CDATA, entities, other elements', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!-- generated <loc>https://not.a/page</loc> -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" data-x="a > b">
  <sm:url>
    <sm:loc>https://a.example/search?q=1&amp;page=2&#38;x=&#x41;</sm:loc>
    <sm:lastmod>2026-01-01</sm:lastmod>
    <image:image><image:loc>https://a.example/picture.png</image:loc></image:image>
  </sm:url>
  <sm:url><sm:loc><![CDATA[https://a.example/<raw>&amp;]]></sm:loc></sm:url>
  <sm:url><sm:loc>https://a.example/&unknown;</sm:loc></sm:url>
  <sm:url/>
</sm:urlset>`;
    const expected = pages(
      'https://a.example/search?q=1&page=2&x=A',
      'https://a.example/<raw>&amp;',
      'https://a.example/&unknown;',
    );
    expect(scan(xml)).toEqual(expected);
    // Cut anywhere, even inside a tag, a comment or an entity, the text reads the same.
    for (const size of [1, 2, 3, 5, 7, 13, 64]) expect(scanInPieces(xml, size)).toEqual(expected);
  });

  it('refuses document type and entity declarations (external entities, billion laughs) without expanding them', () => {
    const xxe =
      '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e SYSTEM "file:///etc/passwd">]><urlset><url><loc>https://a.example/&e;</loc></url></urlset>';
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
    ).join('')}]><urlset><url><loc>https://a.example/&lol9;</loc></url></urlset>`;
    for (const xml of [xxe, laughs, '<urlset><!ENTITY x "y"><url><loc>https://a.example/</loc></url></urlset>']) {
      expect(() => scan(xml)).toThrow(/document type or entity declaration/);
      expect(() => scanInPieces(xml, 3)).toThrow(/document type or entity declaration/);
    }
  });

  it('refuses markup that never ends instead of holding it', () => {
    const scanner = new SitemapScanner();
    scanner.push('<urlset><url><loc>https://a.example/</loc></url><!--');
    expect(() => {
      for (let i = 0; i < 20; i += 1) scanner.push('x'.repeat(64 * 1024));
    }).toThrow(/markup longer than/);
  });

  it('reads a large sitemap chunk by chunk, letting the event loop run between chunks, and stops when asked', async () => {
    const count = 100_000;
    const body = Buffer.from(
      `<urlset>${Array.from({ length: count }, (_, i) => `<url><loc>https://a.example/page/${i}</loc></url>`).join('')}</urlset>`,
    );
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 1);
    let read = 0;
    let last = '';
    try {
      for await (const entries of readSitemap(body)) {
        for (const entry of entries) {
          read += 1;
          last = entry.loc;
          // Synchronous work per entry, as a reader applying patterns does.
          for (let spin = 0; spin < 200; spin += 1) last = last.trim();
        }
      }
    } finally {
      clearInterval(timer);
    }
    expect(read).toBe(count);
    expect(last).toBe(`https://a.example/page/${count - 1}`);
    expect(ticks).toBeGreaterThan(0);

    let chunks = 0;
    for await (const _ of readSitemap(body)) if (++chunks === 3) break;
    expect(chunks).toBe(3);
  });
});
