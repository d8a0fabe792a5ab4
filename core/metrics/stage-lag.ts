import { STAGE_NAMES, stageInputTopic, type Topics } from '../events/events.ts';
import type { MessageLogAdmin } from '../ports/message-log/message-log.port.ts';
import type { StageLag } from './metrics.port.ts';

/** Every stage's consumer-group lag on each partition of its input topic. */
export async function readStageLag(log: MessageLogAdmin, topics: Topics): Promise<StageLag[]> {
  const perStage = await Promise.all(
    STAGE_NAMES.map(async (stage) => {
      const topic = stageInputTopic(topics, stage);
      const partitions = await log.lagByPartition(topics.group(stage), topic);
      return partitions.map(({ partition, lag }) => ({ stage, topic, partition, lag }));
    }),
  );
  return perStage.flat();
}
