/**
 * Source of the worker thread that runs a `transformers` model: it loads the pipeline, then embeds
 * one request at a time, in arrival order, so tokenising and ONNX Runtime's calls never hold the
 * service's event loop. Kept as CommonJS source text (run with `eval`) so the worker needs no
 * TypeScript loader; it imports the library from the path the main thread resolved.
 *
 * ONNX Runtime's worker threads sleep when idle instead of spinning (`allow_spinning` 0).
 *
 * Per request: every text longer than the model's window is cut at word boundaries into windows of
 * at most `maxTokens` tokens (a word longer than a window is cut inside), the windows of all texts
 * are embedded longest first in calls of `perCall` texts (so a call pads little), and a text's
 * vector is the token-weighted mean of its windows' vectors (renormalised by the caller).
 */
export const TRANSFORMERS_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const describe = (e) => (e && e.stack) || String(e);
const BATCH_DEPENDENT_DTYPES = new Set(['q8', 'int8', 'uint8']);
const o = workerData;
let extractor = null;
let perCall = o.batchSize;

let queue = import(o.transformersModule).then(async (lib) => {
  lib.env.allowLocalModels = true;
  lib.env.allowRemoteModels = o.allowRemote;
  if (o.localRoot) lib.env.localModelPath = o.localRoot;
  extractor = await lib.pipeline('feature-extraction', o.model, {
    local_files_only: !o.allowRemote,
    ...(o.dtype ? { dtype: o.dtype } : {}),
    // ONNX Runtime's threads otherwise spin between calls, taking the cores that concurrent queries'
    // graph walks and keyword searches need: with them asleep, hybrid search with 8 clients at 100k
    // chunks answered in about 0.6 of the time, at the same indexing throughput (docs/benchmarks.md).
    session_options: {
      intraOpNumThreads: o.threads,
      interOpNumThreads: 1,
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    },
  });
  const sessions = extractor.model && extractor.model.sessions;
  const dtype = sessions && sessions.model && sessions.model.config ? sessions.model.config.dtype : null;
  if (typeof dtype === 'string' && BATCH_DEPENDENT_DTYPES.has(dtype)) perCall = 1;
  parentPort.postMessage({ type: 'ready', dtype: typeof dtype === 'string' ? dtype : null, perCall });
}).catch((error) => parentPort.postMessage({ type: 'failed', error: describe(error) }));

function count(text) {
  return extractor.tokenizer.encode(text, { add_special_tokens: false }).length;
}

function windows(text) {
  const budget = o.maxTokens - 2;
  const whole = count(text);
  if (whole <= budget) return [{ text, tokens: Math.max(whole, 1) }];
  const out = [];
  let start = -1;
  let end = -1;
  let used = 0;
  const flush = () => {
    if (start >= 0) out.push({ text: text.slice(start, end), tokens: Math.max(used, 1) });
    start = -1;
    used = 0;
  };
  for (const match of text.matchAll(/\\S+/g)) {
    const word = match[0];
    const at = match.index;
    const tokens = count(word);
    if (tokens > budget) {
      flush();
      // A run without spaces longer than a window: pieces of at most budget characters hold at
      // most budget tokens (every token covers at least one character).
      for (let i = 0; i < word.length; i += budget) {
        const piece = word.slice(i, i + budget);
        out.push({ text: piece, tokens: Math.max(count(piece), 1) });
      }
      continue;
    }
    if (used + tokens > budget) flush();
    if (start < 0) start = at;
    end = at + word.length;
    used += tokens;
  }
  flush();
  return out.length > 0 ? out : [{ text, tokens: 1 }];
}

async function embed(texts) {
  const pieces = [];
  texts.forEach((text, owner) => {
    for (const w of windows(text)) pieces.push({ text: w.text, tokens: w.tokens, owner });
  });
  pieces.sort((a, b) => b.tokens - a.tokens);
  let dims = 0;
  let sums = null;
  for (let i = 0; i < pieces.length; i += perCall) {
    const batch = pieces.slice(i, i + perCall);
    const output = await extractor(batch.map((p) => p.text), { pooling: o.pooling, normalize: true });
    const width = output.dims[output.dims.length - 1];
    if (sums === null) {
      dims = width;
      sums = new Float32Array(texts.length * dims);
    }
    batch.forEach((p, row) => {
      const offset = p.owner * dims;
      for (let d = 0; d < dims; d += 1) sums[offset + d] += p.tokens * output.data[row * width + d];
    });
  }
  return { dims, flat: sums === null ? new Float32Array(0) : sums };
}

parentPort.on('message', (request) => {
  queue = queue.then(async () => {
    try {
      if (!extractor) throw new Error('the model is not loaded');
      const { dims, flat } = await embed(request.texts);
      parentPort.postMessage({ type: 'result', id: request.id, dims, flat }, [flat.buffer]);
    } catch (error) {
      parentPort.postMessage({ type: 'error', id: request.id, error: describe(error) });
    }
  });
});
`;
