import { describeError } from '../../../core/errors/describe-error.ts';
import { isKbError, KbError } from '../../../core/errors/kb-error.ts';
import type { Runtime } from '../../../core/runtime/runtime.ts';

/**
 * At the start of `kb serve` and `kb worker` with an embedding server (`KB_EMBEDDING_PROVIDER=openai`),
 * asks it once. A configuration it cannot work with stops the start with a `config-invalid` saying
 * what to change: an address the outbound rules refuse, a refused key, an unknown model, a vector
 * size other than `KB_EMBEDDING_DIMENSIONS`, or an index that holds vectors of the same model name
 * at another size (the model behind the name changed; its vectors cannot be compared with the
 * index's). A server that does not answer yet is only reported: search and the embed stage use it
 * once it answers. Other providers are not asked (their vector size follows from the model name).
 */
export async function checkEmbeddingServer(runtime: Runtime, err: NodeJS.WritableStream): Promise<void> {
  if (runtime.config.embedding.provider !== 'openai') return;
  let provider: Awaited<ReturnType<Runtime['ports']['getEmbeddings']>>;
  try {
    provider = await runtime.ports.getEmbeddings();
  } catch (error) {
    if (isKbError(error) && error.code === 'config-invalid') throw error;
    err.write(
      `\nWarning: the embedding server at ${runtime.config.embedding.url} does not answer yet (${describeError(error)}).\n` +
        'Semantic search and the embed stage wait for it (documents are retried); keyword search works meanwhile.\n\n',
    );
    return;
  }
  const held = await runtime.services.reindex.indexModel();
  if (held !== null && held.model === provider.model && held.dimensions !== provider.dimensions) {
    throw new KbError(
      'config-invalid',
      `The index holds ${held.dimensions}-dimensional vectors of ${held.model}, but the embedding server at ` +
        `${runtime.config.embedding.url} now answers ${provider.dimensions}-dimensional vectors for the same model name: ` +
        'the model it serves under that name changed, and its vectors cannot be compared with the index. ' +
        'Serve the model the index was built with again, or run `kb reindex` to embed every stored chunk with the new one.',
    );
  }
}
