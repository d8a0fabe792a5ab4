/**
 * Plain texts of a known number of chunks for scheduling tests: `entries` one-sentence paragraphs,
 * each its own chunk at `KB_CHUNK_TOKENS=64`, every sentence carrying `tag` so that the embedding
 * calls of one document can be told apart.
 */
const WORDS = [
  'amber',
  'basalt',
  'cobalt',
  'delta',
  'ember',
  'fjord',
  'granite',
  'harbor',
  'indigo',
  'juniper',
  'kelp',
  'lagoon',
  'meadow',
  'nickel',
  'orchid',
  'pewter',
  'quartz',
  'russet',
  'saffron',
  'tundra',
];

/** Environment that makes one ledger entry one chunk. */
export const LEDGER_CHUNKING = { KB_CHUNK_TOKENS: '64', KB_CHUNK_OVERLAP: '8' } as const;

export function ledgerText(tag: string, entries: number): string {
  const parts: string[] = [];
  for (let i = 0; i < entries; i++) {
    const w = (k: number) => WORDS[(i * 7 + k * 3) % WORDS.length];
    parts.push(
      `Ledger ${tag} entry ${i} notes that the ${w(1)} crate reached the ${w(2)} depot beside the ${w(3)} quay on day ${i % 365}.`,
    );
  }
  return parts.join('\n\n');
}
