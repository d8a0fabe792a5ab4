/**
 * Deterministic, realistic-looking markdown prose for version tests: sections with a heading and
 * paragraphs of varied sentences, all from a seeded generator (same seed, same text). The result is
 * a plain structure the tests edit (insert a paragraph, reword a sentence, drop a section) before
 * rendering it to markdown.
 */

export interface ProseSection {
  heading: string;
  /** Paragraphs, each a list of sentences. */
  paragraphs: string[][];
}

export interface ProseDocument {
  title: string;
  sections: ProseSection[];
}

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUBJECTS = [
  'The harbour authority',
  'A small team of surveyors',
  'The municipal archive',
  'Most of the regional cooperatives',
  'The night shift at the pumping station',
  'An independent auditor',
  'The river commission',
  'Several apprentices',
  'The chief engineer',
  'A delegation from the northern valleys',
  'The ferry operators',
  'Local schoolteachers',
  'The weather office',
  'A retired cartographer',
  'The grain exchange',
  'Two visiting botanists',
];
const VERBS = [
  'documented',
  'questioned',
  'revised',
  'measured',
  'compared',
  'rebuilt',
  'catalogued',
  'postponed',
  'inspected',
  'negotiated',
  'published',
  'reconsidered',
  'mapped',
  'financed',
  'simplified',
  'tested',
];
const OBJECTS = [
  'the drainage plan for the lower districts',
  'every ledger kept since the flood',
  'the timetable of the coastal railway',
  'a survey of the old quarry roads',
  'the contract for the new lighthouse lens',
  'the tolls charged at the eastern bridge',
  'the seed stock stored in the cellars',
  'the rules for sharing the irrigation canals',
  'a census of the mountain villages',
  'the salt reserves held at the depot',
  'the design of the winter shelters',
  'the route of the proposed aqueduct',
  'a map of the shifting sandbanks',
  'the records of the spring market',
  'the maintenance log of the tide gauges',
  'the budget for repairing the sea wall',
];
const CLAUSES = [
  'after a long and unusually dry summer',
  'because the previous figures no longer matched the field notes',
  'while the council debated the new levy',
  'although nobody expected the results to change much',
  'once the roads reopened in early spring',
  'so that the neighbouring towns could plan their harvests',
  'before the storms of the autumn equinox arrived',
  'despite repeated delays in the delivery of materials',
  'under the supervision of an external committee',
  'with help from volunteers who knew the terrain',
  'in response to complaints from the fishing fleet',
  'as part of a wider review of public works',
];
const OPENERS = ['In the end,', 'By midwinter,', 'Unsurprisingly,', 'Meanwhile,', 'Later that year,', 'In practice,'];
const OUTCOMES = [
  'the estimates turned out to be conservative',
  'the new arrangement saved weeks of work',
  'several older assumptions had to be abandoned',
  'the committee asked for a second opinion',
  'costs rose by roughly a fifth',
  'the archive gained a complete set of drawings',
  'the workers proposed a simpler procedure',
  'the residents accepted the compromise',
];
const TOPICS = [
  'Water rights',
  'Harbour works',
  'Roads and bridges',
  'Markets',
  'Schools',
  'Weather records',
  'Public health',
  'The archive',
  'Agriculture',
  'Fisheries',
  'Lighthouses',
  'Railways',
  'Mines',
  'Forestry',
  'Housing',
  'Finance',
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function sentence(random: () => number, serial: number): string {
  const roll = random();
  // Serial numbers and years keep sentences (and so chunks) distinct across a long document.
  const year = 1850 + (serial % 170);
  if (roll < 0.45) {
    return `${pick(random, SUBJECTS)} ${pick(random, VERBS)} ${pick(random, OBJECTS)} ${pick(random, CLAUSES)}.`;
  }
  if (roll < 0.75) {
    return `${pick(random, OPENERS)} ${pick(random, OUTCOMES)}, and the report of ${year} (entry ${serial}) says so plainly.`;
  }
  return `In ${year}, ${pick(random, SUBJECTS).toLowerCase()} ${pick(random, VERBS)} ${pick(random, OBJECTS)}; entry ${serial} records that ${pick(random, OUTCOMES)}.`;
}

/**
 * A document of `sections` sections; each has 3–6 paragraphs of 3–7 sentences (about 25 words
 * each), so a section is roughly 1,200–2,000 tokens.
 */
export function generateProse(seed: number, sections: number): ProseDocument {
  const random = seededRandom(seed);
  let serial = 0;
  const out: ProseSection[] = [];
  for (let s = 0; s < sections; s++) {
    const paragraphs: string[][] = [];
    const count = 3 + Math.floor(random() * 4);
    for (let p = 0; p < count; p++) {
      const length = 3 + Math.floor(random() * 5);
      paragraphs.push(Array.from({ length }, () => sentence(random, serial++)));
    }
    out.push({ heading: `${pick(random, TOPICS)}, part ${s + 1}`, paragraphs });
  }
  return { title: `Annals of the river towns (${seed})`, sections: out };
}

export function renderMarkdown(doc: ProseDocument): string {
  const parts = [`# ${doc.title}`];
  for (const section of doc.sections) {
    parts.push(`## ${section.heading}`);
    for (const paragraph of section.paragraphs) parts.push(paragraph.join(' '));
  }
  return `${parts.join('\n\n')}\n`;
}

/** A deep copy to edit without touching the original. */
export function cloneProse(doc: ProseDocument): ProseDocument {
  return {
    title: doc.title,
    sections: doc.sections.map((s) => ({ heading: s.heading, paragraphs: s.paragraphs.map((p) => [...p]) })),
  };
}
