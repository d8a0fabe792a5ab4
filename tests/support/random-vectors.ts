import { seededRandom } from './seeded-prose.ts';

/** Deterministic pseudo-random unit vectors of `dimensions`: each call of the answer gives the next. */
export function randomVectors(seed: number, dimensions: number): () => Float32Array {
  const next = seededRandom(seed);
  return () => {
    const v = Float32Array.from({ length: dimensions }, () => next() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
}
