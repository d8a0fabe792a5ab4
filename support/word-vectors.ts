import { createHash } from 'node:crypto';

/**
 * Deterministic stand-in vectors for the loopback embedding fakes: the sum of one pseudo-random
 * direction per lower-cased word (seeded by the word's hash), normalised, so the same text always
 * gets the same vector and texts that share words point the same way. No language model: word
 * overlap is all it knows.
 */
export function createWordVectors(dimensions: number): (text: string) => Float32Array {
  const wordVectors = new Map<string, Float32Array>();

  const wordVector = (word: string): Float32Array => {
    let vector = wordVectors.get(word);
    if (!vector) {
      vector = new Float32Array(dimensions);
      let block = createHash('sha256').update(word).digest();
      for (let i = 0, offset = 0; i < dimensions; i += 1, offset += 2) {
        if (offset + 2 > block.length) {
          block = createHash('sha256').update(block).digest();
          offset = 0;
        }
        vector[i] = block.readInt16LE(offset) / 32768;
      }
      wordVectors.set(word, vector);
    }
    return vector;
  };

  return (text: string): Float32Array => {
    const sum = new Float32Array(dimensions);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [''];
    for (const word of words) {
      const v = wordVector(word);
      for (let i = 0; i < dimensions; i += 1) sum[i] = (sum[i] as number) + (v[i] as number);
    }
    let norm = 0;
    for (const x of sum) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    return sum.map((x) => x / norm);
  };
}
