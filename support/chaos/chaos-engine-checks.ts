/**
 * What the chaos scenario reads from the engines themselves once the pipeline drained: the chunks
 * in OpenSearch (each chunk of a version once), the stages' consumer lag, and what the dead-letter
 * topics hold.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../core/config/config.ts';
import { STAGE_NAMES, type StageName, type Topics } from '../../core/events/events.ts';
import type { MessageLogAdmin, MessageLogTail } from '../../core/ports/message-log/message-log.port.ts';

export interface ChunkIndexCheck {
  /** Chunk documents of the workspace in the index. */
  readonly chunks: number;
  /** (document, version, index) held by more than one chunk document, counted once per extra copy. */
  duplicates: number;
  /** Chunk documents whose id is not `<document>:<version>:<index>`. */
  oddIds: number;
}

/** Scans the instance's OpenSearch chunk index for the workspace's chunks. */
export async function checkChunkIndex(config: Config, workspaceId: string): Promise<ChunkIndexCheck> {
  const url = config.opensearch.url ?? '';
  const index = `${config.opensearch.indexPrefix}-chunks`;
  await fetch(`${url}/${index}/_refresh`, { method: 'POST' });
  const seen = new Map<string, number>();
  let chunks = 0;
  let oddIds = 0;
  let after: unknown[] | null = null;
  for (;;) {
    const response = await fetch(`${url}/${index}/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        size: 1000,
        _source: ['document_id', 'version', 'idx'],
        query: { term: { workspace_id: workspaceId } },
        sort: [{ id: 'asc' }],
        ...(after ? { search_after: after } : {}),
      }),
    });
    if (!response.ok) throw new Error(`scanning ${index} answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as {
      hits: {
        hits: Array<{ _id: string; _source: { document_id: string; version: number; idx: number }; sort: unknown[] }>;
      };
    };
    const hits = body.hits.hits;
    for (const hit of hits) {
      chunks++;
      const { document_id, version, idx } = hit._source;
      const key = `${document_id}:${version}:${idx}`;
      if (hit._id !== key) oddIds++;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    if (hits.length < 1000) break;
    after = hits.at(-1)?.sort ?? null;
  }
  let duplicates = 0;
  for (const copies of seen.values()) duplicates += copies - 1;
  return { chunks, duplicates, oddIds };
}

/** Messages the stages' consumer groups have not committed, summed over the four stages. */
export async function stageLag(admin: MessageLogAdmin, topics: Topics): Promise<Record<StageName, number>> {
  const inputs: Record<StageName, string> = {
    parse: topics.uploaded,
    chunk: topics.parsed,
    embed: topics.chunked,
    index: topics.embedded,
  };
  const lag = {} as Record<StageName, number>;
  for (const stage of STAGE_NAMES) {
    const partitions = await admin.lagByPartition(topics.group(stage), inputs[stage]);
    lag[stage] = partitions.reduce((sum, p) => sum + p.lag, 0);
  }
  return lag;
}

export interface DeadLetters {
  readonly total: number;
  readonly byStage: Record<string, number>;
  readonly byCode: Record<string, number>;
  /** A few of them: stage, code, document, version, message. */
  readonly samples: string[];
}

/**
 * Reads every dead letter of the four stages' topics: how many each holds is the lag of a group
 * that never committed, and a tail from the start reads them (for at most `timeoutMs` each).
 */
export async function readDeadLetters(
  admin: MessageLogAdmin,
  tail: MessageLogTail,
  topics: Topics,
  timeoutMs = 20_000,
): Promise<DeadLetters> {
  const byStage: Record<string, number> = {};
  const byCode: Record<string, number> = {};
  const samples: string[] = [];
  let total = 0;
  for (const stage of STAGE_NAMES) {
    const topic = topics.deadLetter(stage);
    const held = (await admin.lagByPartition(`chaos-count-${randomUUID()}`, topic)).reduce((s, p) => s + p.lag, 0);
    byStage[stage] = held;
    total += held;
    if (held === 0) continue;
    let read = 0;
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const subscription = await tail.tail({
      topic,
      sinceMs: 0,
      async handler(message) {
        const letter = message.value;
        const code = String(letter.error_code ?? 'unknown');
        byCode[code] = (byCode[code] ?? 0) + 1;
        if (samples.length < 12) {
          let ref = '';
          try {
            const payload = JSON.parse(String(letter.payload ?? '{}')) as { document_id?: string; version?: number };
            ref = `${payload.document_id} v${payload.version}`;
          } catch {
            ref = 'unreadable payload';
          }
          samples.push(
            `${stage} ${code} ${ref} after ${letter.attempts} attempt(s): ${String(letter.error_message ?? '').slice(0, 160)}`,
          );
        }
        if (++read >= held) done();
      },
    });
    const timer = setTimeout(done, timeoutMs);
    await finished;
    clearTimeout(timer);
    await subscription.stop();
  }
  return { total, byStage, byCode, samples };
}
