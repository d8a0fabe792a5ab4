/**
 * The embedding server of the `ingest, embedding server` row: the loopback fake of the OpenAI
 * embeddings API (support/openai-embeddings-fake.ts) in a process of its own, as a real server
 * is, answering at once from fixed vectors serialised once (384 dimensions, model `fake-embed`).
 * Prints its port.
 */
import { startOpenAiEmbeddingsFake } from '../../support/openai-embeddings-fake.ts';

const server = await startOpenAiEmbeddingsFake({ dimensions: 384, vectors: 'pool', recordCalls: false });
process.stdout.write(`${new URL(server.url).port}\n`);
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
