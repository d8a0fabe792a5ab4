/**
 * Fairness across workspaces: a workspace uploads large texts (about 3 MB each, some 1,500 chunks at
 * the default chunking), then another workspace uploads 30 one-line documents; the row gives how
 * long those small documents take from upload to `completed`, behind 2 and behind 8 large ones.
 * `kb serve` runs every stage in its own process with the configured embedding provider, as a user
 * runs it; the large documents are not waited for (the service is stopped, the instance removed).
 * Goals: the slowest small document completes within 20 s, and the bound does not grow with the
 * number of large documents (slowest behind 8 ÷ slowest behind 2 ≤ 1.5).
 */
import { type ChildService, startChild, stopChild } from '../../support/child-service.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, createKeys, openInstance } from '../lib/service.ts';
import { quantile } from '../lib/stats.ts';
import type { Target } from '../lib/target.ts';

const SMALL = 30;
const LARGE_BYTES = 3_000_000;
const COUNTS = [2, 8] as const;
const WORDS =
  'harbour tide gauge ledger depot quay crate survey beacon channel pilot ballast mooring wharf cargo manifest current estuary shoal buoy'.split(
    ' ',
  );

/** A plain text of about `bytes` bytes: sentences of seeded words, a paragraph every few sentences. */
function largeText(bytes: number, seed: number): string {
  const random = createRandom(seed);
  const parts: string[] = [];
  let length = 0;
  for (let sentence = 0; length < bytes; sentence++) {
    const words = Array.from({ length: 12 }, () => random.pick(WORDS));
    const text = `Entry ${sentence} records that the ${words.join(' ')}.${sentence % 5 === 4 ? '\n\n' : ' '}`;
    parts.push(text);
    length += text.length;
  }
  return parts.join('');
}

async function upload(url: string, key: string, name: string, text: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/plain' }), name);
  const response = await fetch(`${url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  const body = (await response.json()) as { document_id?: string; detail?: string };
  if (response.status !== 201 || !body.document_id) {
    throw new Error(`upload of ${name} answered ${response.status}: ${body.detail ?? ''}`);
  }
  return body.document_id;
}

/**
 * Milliseconds from each upload until its document is `completed`, reading the workspace's list
 * every 100 ms: one request for all of them (polling each document would itself load the service
 * with 30 × 10 requests a second on the cores it measures).
 */
async function completedAfter(url: string, key: string, uploadedAt: ReadonlyMap<string, number>): Promise<number[]> {
  const deadline = Date.now() + 600_000;
  const waits = new Map<string, number>();
  for (;;) {
    const response = await fetch(`${url}/api/v1/documents?limit=${uploadedAt.size}`, { headers: { 'X-API-Key': key } });
    const body = (await response.json()) as { documents?: Array<{ id: string; status: string }>; detail?: string };
    if (!body.documents)
      throw new Error(`listing the small documents answered ${response.status}: ${body.detail ?? ''}`);
    const now = Date.now();
    for (const item of body.documents) {
      const started = uploadedAt.get(item.id);
      if (started === undefined || waits.has(item.id)) continue;
      if (item.status === 'completed') waits.set(item.id, now - started);
      if (item.status === 'failed') throw new Error(`small document ${item.id} failed`);
    }
    if (waits.size === uploadedAt.size) return [...waits.values()];
    if (now > deadline)
      throw new Error(`${uploadedAt.size - waits.size} small documents did not complete within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One run: `count` large texts of one workspace, then the small documents of another. */
async function run(ctx: BenchContext, target: Target, count: number, texts: readonly string[]): Promise<number[]> {
  const instance = await target.fresh();
  let child: ChildService | null = null;
  try {
    const setup = await openInstance(instance);
    const [bulk] = await createKeys(setup.runtime, 'bulk', 1);
    const [quiet] = await createKeys(setup.runtime, 'quiet', 1);
    await setup.close();
    child = await startChild(['serve', '--stages', 'all'], childEnv(instance), { timeoutMs: 180_000 });
    const url = child.url;
    ctx.progress(`fairness (${target.runtime}): ${count} large documents, then ${SMALL} small ones`);
    for (let i = 0; i < count; i++) await upload(url, bulk as string, `bulk-${i}.txt`, texts[i] as string);
    const uploadedAt = new Map<string, number>();
    for (let i = 0; i < SMALL; i++) {
      const started = Date.now();
      const id = await upload(url, quiet as string, `line-${i}.txt`, `Line ${i} of the tide table for pier ${count}.`);
      uploadedAt.set(id, started);
    }
    return await completedAfter(url, quiet as string, uploadedAt);
  } finally {
    if (child) await stopChild(child, 'SIGKILL');
    await instance.cleanup();
  }
}

export async function fairnessScenario(ctx: BenchContext, target: Target): Promise<Row> {
  const row = createRow('fairness across workspaces', target.runtime, `${SMALL} small docs`);
  const texts = Array.from({ length: Math.max(...COUNTS) }, (_, i) => largeText(LARGE_BYTES, ctx.options.seed + i));
  const slowest = new Map<number, number[]>(COUNTS.map((count) => [count, []]));
  const median = new Map<number, number[]>(COUNTS.map((count) => [count, []]));
  const growth: number[] = [];
  for (let round = 0; round < ctx.options.rounds; round++) {
    // The order alternates by round, so neither count always runs on a warmer machine.
    const order = round % 2 === 0 ? [...COUNTS] : [...COUNTS].reverse();
    const worst = new Map<number, number>();
    for (const count of order) {
      const waits = (await run(ctx, target, count, texts)).map((ms) => ms / 1000);
      worst.set(count, Math.max(...waits));
      slowest.get(count)?.push(Math.max(...waits));
      median.get(count)?.push(quantile(waits, 0.5));
    }
    growth.push((worst.get(8) as number) / (worst.get(2) as number));
  }
  for (const count of COUNTS) {
    addFigure(row, `small documents behind ${count} large, median (upload → completed)`, 's', median.get(count) ?? []);
    judge(addFigure(row, `small documents behind ${count} large, slowest`, 's', slowest.get(count) ?? []), {
      atMost: 20,
    });
  }
  judge(addFigure(row, 'slowest behind 8 ÷ slowest behind 2', 'ratio', growth), { atMost: 1.5 });
  row.notes.push(
    `workspace "bulk" uploads ${COUNTS.join(' or ')} plain texts of ${LARGE_BYTES / 1e6} MB each, then workspace "quiet" uploads ${SMALL} one-line documents; kb serve with every stage and the configured embedding provider, one fresh instance per run`,
  );
  return row;
}
