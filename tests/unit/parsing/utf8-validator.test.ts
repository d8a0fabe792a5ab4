import { describe, expect, it } from 'vitest';
import { createUtf8Validator } from '../../../core/parsing/utf8-validator.ts';

/** What a fatal TextDecoder says about the whole byte string. */
function decoderSays(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Feeds `bytes` to a validator cut at `cuts` (sorted offsets); its verdict. */
function validatorSays(bytes: Uint8Array, cuts: readonly number[]): boolean {
  const validator = createUtf8Validator();
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    validator.update(bytes.subarray(from, cut));
    from = cut;
  }
  return validator.finish();
}

/** A seeded generator (mulberry32) so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Sequences a fatal decoder rejects, each alone: overlong forms, surrogates, above U+10FFFF,
// stray continuation bytes, bytes that never occur, sequences cut short by ASCII.
const INVALID = [
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xf0, 0x80, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
  [0xbf],
  [0xff],
  [0xf5, 0x80, 0x80, 0x80],
  [0xe2, 0x28, 0xa1],
  [0xf0, 0x9f, 0x98],
];

describe('streaming UTF-8 validator', () => {
  it('agrees with a fatal TextDecoder on every way of cutting valid and invalid text into three chunks', () => {
    const valid = Buffer.from('aé✓😀z');
    const samples = [valid, ...INVALID.map((bad) => Buffer.concat([Buffer.from('aé'), Buffer.from(bad), valid]))];
    for (const bytes of samples) {
      const expected = decoderSays(bytes);
      for (let i = 0; i <= bytes.length; i++) {
        for (let j = i; j <= bytes.length; j++) {
          expect(validatorSays(bytes, [i, j]), `${bytes.toString('hex')} cut at ${i}, ${j}`).toBe(expected);
        }
      }
    }
  });

  it('agrees with a fatal TextDecoder on random mixes of characters and broken bytes in random chunks', () => {
    const rng = random(20240601);
    const pieces = ['a', ' ', 'é', '✓', '😀', '\u{10ffff}', '\uffff'].map((c) => Buffer.from(c));
    let invalidSeen = 0;
    for (let round = 0; round < 400; round++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 40; k++) {
        if (rng() < 0.01) parts.push(Buffer.from(INVALID[Math.floor(rng() * INVALID.length)] as number[]));
        else parts.push(pieces[Math.floor(rng() * pieces.length)] as Buffer);
      }
      const bytes = Buffer.concat(parts);
      // Sometimes drop the last byte, leaving a sequence unfinished at the end of the stream.
      const input = rng() < 0.2 ? bytes.subarray(0, bytes.length - 1) : bytes;
      const cuts = Array.from({ length: 1 + Math.floor(rng() * 8) }, () => Math.floor(rng() * (input.length + 1))).sort(
        (x, y) => x - y,
      );
      const expected = decoderSays(input);
      if (!expected) invalidSeen++;
      expect(validatorSays(input, cuts), `${input.toString('hex')} cut at ${cuts.join(',')}`).toBe(expected);
    }
    expect(invalidSeen).toBeGreaterThan(50);
  });

  it('accepts a leading byte-order mark and an empty stream; rejects a sequence left unfinished', () => {
    expect(validatorSays(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), [1])).toBe(true);
    expect(validatorSays(Buffer.alloc(0), [])).toBe(true);
    expect(validatorSays(Buffer.from([0x61, 0xf0, 0x9f]), [2])).toBe(false);
  });
});
