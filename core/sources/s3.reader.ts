import { Readable } from 'node:stream';
import { Client } from 'minio';
import { KbError } from '../errors/kb-error.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { createGuardedAgent } from '../outbound/outbound-policy.ts';
import { eventLoopTurns } from '../util/event-loop-turns.ts';
import type { ItemMatcher } from './item-matcher.ts';
import type { ListedFailure, SourceEntry, SourceReader } from './source-reader.ts';

export interface S3Credentials {
  readonly accessKey: string;
  readonly secretKey: string;
}

/** The `minio` client of an S3-compatible endpoint, its connections through the outbound guard. */
export function s3Client(input: {
  readonly endpoint: string;
  readonly region?: string | undefined;
  readonly credentials: S3Credentials | null;
  readonly policy: OutboundPolicy;
}): Client {
  const url = new URL(input.endpoint);
  const secure = url.protocol === 'https:';
  const client = new Client({
    endPoint: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 443 : 80,
    useSSL: secure,
    accessKey: input.credentials?.accessKey ?? '',
    secretKey: input.credentials?.secretKey ?? '',
    ...(input.region ? { region: input.region } : {}),
    pathStyle: true,
    transportAgent: createGuardedAgent(secure ? 'https:' : 'http:', input.policy),
  });
  return client;
}

const unreachable = (what: string, error: unknown) => {
  if (error instanceof KbError) return error;
  const code = (error as { code?: string }).code;
  return new KbError('source-unreachable', `${what}: ${code ? `${code}: ` : ''}${(error as Error).message}`, {
    cause: error,
  });
};

/**
 * Objects of a bucket under a prefix on any S3-compatible store. Patterns match the key without
 * the prefix; the item is the whole key. Change detection by ETag and size from the listing, so
 * an unchanged object is never downloaded. An object is read whole into memory (it is at most the
 * upload size limit, checked from the listing first).
 */
export function createS3Reader(input: {
  readonly client: Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly matcher: ItemMatcher;
  readonly maxBytes: number;
  /** Bound of one request (the bucket check, a page of the listing, one object's download). */
  readonly timeoutMs: number;
}): SourceReader {
  const { client, bucket, prefix, timeoutMs } = input;

  /** `work` within the bound; on timeout `abort` runs (cutting the transfer) and it rejects with `timeout`. */
  async function bounded<T>(what: string, work: Promise<T>, abort: () => void = () => {}): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort();
        reject(new KbError('timeout', `${what} took longer than ${timeoutMs} ms.`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    async *list(): AsyncGenerator<SourceEntry | ListedFailure> {
      let stream: AsyncIterable<{ name?: string; size?: number; etag?: string; lastModified?: Date }>;
      let listing: Readable | undefined;
      try {
        if (!(await bounded(`Checking the bucket ${bucket}`, client.bucketExists(bucket)))) {
          throw new KbError('source-unreachable', `The bucket ${bucket} does not exist.`);
        }
        listing = client.listObjectsV2(bucket, prefix, true);
        stream = listing;
      } catch (error) {
        throw unreachable(`The bucket ${bucket} cannot be listed`, error);
      }
      const iterator = stream[Symbol.asyncIterator]();
      // A page of the listing arrives at once: its keys are matched in slices, with turns of the event loop.
      const turns = eventLoopTurns();
      for (;;) {
        const turn = turns.turn();
        if (turn) await turn;
        let next: IteratorResult<{ name?: string; size?: number; etag?: string; lastModified?: Date }>;
        try {
          next = await bounded(`Listing the bucket ${bucket}`, iterator.next(), () => listing?.destroy());
        } catch (error) {
          throw unreachable(`The bucket ${bucket} cannot be listed`, error);
        }
        if (next.done) return;
        const object = next.value;
        if (!object.name || object.name.endsWith('/')) continue;
        if (!input.matcher(object.name.slice(prefix.length))) continue;
        yield {
          key: object.name,
          sizeBytes: object.size ?? null,
          mtimeMs: object.lastModified ? object.lastModified.getTime() : null,
          etag: object.etag ?? null,
          lastModified: null,
        };
      }
    },

    async read(entry) {
      let body: Buffer;
      let download: Readable | undefined;
      const whole = async () => {
        download = await client.getObject(bucket, entry.key);
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of download) {
          size += (chunk as Buffer).length;
          if (size > input.maxBytes) {
            download.destroy();
            throw new KbError('payload-too-large', `The object is over the limit of ${input.maxBytes} bytes.`);
          }
          chunks.push(chunk as Buffer);
        }
        return Buffer.concat(chunks);
      };
      try {
        body = await bounded(`Reading ${entry.key}`, whole(), () => download?.destroy());
      } catch (error) {
        throw unreachable(`The object ${entry.key} cannot be read`, error);
      }
      return { open: () => Readable.from([body]) };
    },
  };
}
