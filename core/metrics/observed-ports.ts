/**
 * Decorators that report to {@link Metrics} around the ports and stages, applied only at the
 * composition root: the stages, the stage runner and the adapters know nothing of metrics.
 */
import { type EventBase, STAGE_NAMES, type StageName, type Topics } from '../events/events.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { RateLimiter } from '../services/services.ts';
import type { StageDefinition } from '../stages/stage.ts';
import type { Metrics } from './metrics.port.ts';

const seconds = (startedAt: bigint) => Number(process.hrtime.bigint() - startedAt) / 1e9;

/** Times every attempt of the stage's handler and counts its outcome. */
export function observeStage<E extends EventBase>(stage: StageDefinition<E>, metrics: Metrics): StageDefinition<E> {
  return {
    name: stage.name,
    inputTopic: stage.inputTopic,
    async handle(event, attempt, signal) {
      const startedAt = process.hrtime.bigint();
      try {
        await stage.handle(event, attempt, signal);
        metrics.stageAttempt(stage.name, attempt, 'processed', seconds(startedAt));
      } catch (error) {
        metrics.stageAttempt(stage.name, attempt, 'failed', seconds(startedAt));
        throw error;
      }
    },
  };
}

/** Counts events published to a stage's dead-letter topic once the publish is durable. */
export function observeDeadLetters(log: MessageLog, topics: Topics, metrics: Metrics): MessageLog {
  const stageOfTopic = new Map<string, StageName>(STAGE_NAMES.map((stage) => [topics.deadLetter(stage), stage]));
  return {
    kind: log.kind,
    async publish(topic, messages) {
      await log.publish(topic, messages);
      const stage = stageOfTopic.get(topic);
      if (stage) for (let i = 0; i < messages.length; i++) metrics.stageDeadLettered(stage);
    },
    ensureTopics: (specs) => log.ensureTopics(specs),
    subscribe: (options) => log.subscribe(options),
    ping: () => log.ping(),
    close: () => log.close(),
  };
}

/** Counts the texts of every document-embedding call (query embeddings are not chunks). */
export function observeEmbeddings(provider: EmbeddingProvider, metrics: Metrics): EmbeddingProvider {
  return {
    provider: provider.provider,
    model: provider.model,
    dimensions: provider.dimensions,
    async embedDocuments(texts) {
      const vectors = await provider.embedDocuments(texts);
      metrics.embeddingBatch(texts.length);
      return vectors;
    },
    embedQuery: (text) => provider.embedQuery(text),
    close: () => provider.close(),
  };
}

/** Counts the requests the limiter refuses. */
export function observeRateLimiter(limiter: RateLimiter, metrics: Metrics): RateLimiter {
  return {
    hit(key, nowMs, requests) {
      const decision = limiter.hit(key, nowMs, requests);
      if (!decision.allowed) metrics.rateLimited(key.plan);
      return decision;
    },
    close: () => limiter.close(),
  };
}
