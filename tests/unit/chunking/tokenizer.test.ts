import { describe, expect, it } from 'vitest';
import { countTokens, tokenPieces } from '../../../core/chunking/tokenizer.ts';

describe('countTokens', () => {
  it('counts cl100k_base tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
  });

  it('treats special-token markers in documents as plain text', () => {
    expect(() => countTokens('before <|endoftext|> after')).not.toThrow();
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('counts very long unbroken runs of letters, symbols and spaces', () => {
    // Each of these is one pre-token for the tokenizer; counted whole, byte-pair merging would be
    // quadratic in its length. The counts stay close to what the encoding gives on shorter runs.
    const letters = 'x'.repeat(200_000);
    expect(countTokens(letters)).toBeGreaterThanOrEqual(countTokens('x'.repeat(128)) * Math.floor(200_000 / 128));
    expect(countTokens(letters)).toBeLessThanOrEqual(countTokens('x'.repeat(128)) * Math.ceil(200_000 / 128));
    expect(countTokens('-'.repeat(100_000))).toBeGreaterThan(0);
    expect(countTokens(`a${' '.repeat(100_000)}b`)).toBeGreaterThan(2);
    expect(countTokens('ACGT'.repeat(50_000))).toBeGreaterThan(10_000);
  });
});

describe('tokenPieces', () => {
  it('splits text into contiguous pieces whose counts add up to the whole text', () => {
    const text = 'First sentence here. Second one, with a comma!\nA new line: 12345 and émoji 🎉 too.';
    const pieces = tokenPieces(text);
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.starts[0]).toBe(0);
    let sum = 0;
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0) expect(pieces.starts[i]).toBeGreaterThan(pieces.starts[i - 1] as number);
      sum += pieces.counts[i] as number;
    }
    expect(sum).toBe(countTokens(text));
    // Each piece re-counted on its own gives its count (pieces are the tokenizer's own units).
    for (let i = 0; i < pieces.length; i++) {
      const end = i + 1 < pieces.length ? (pieces.starts[i + 1] as number) : text.length;
      expect(countTokens(text.slice(pieces.starts[i], end))).toBe(pieces.counts[i]);
    }
  });

  it('returns nothing for empty text', () => {
    expect(tokenPieces('').length).toBe(0);
  });
});
