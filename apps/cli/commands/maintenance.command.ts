import { parseArgs } from 'node:util';
import { eventSchema, topicSpecs } from '../../../core/events/events.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import type { ReindexReport } from '../../../core/services/reindex.service.ts';
import { type Command, print, table } from './command.ts';
import { CommandLineError } from './help.ts';
import { progressBar } from './progress.ts';

/** The options of `kb <command> <name> [--json]`; throws a {@link CommandLineError} for anything else. */
function subcommandOptions(args: string[], name: string) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const [action, extra] = positionals;
  if (action === undefined) throw new CommandLineError(`name the action: ${name}.`);
  if (action !== name) throw new CommandLineError(`unknown action "${action}"; the action is ${name}.`);
  if (extra !== undefined) throw new CommandLineError(`unexpected argument "${extra}" after ${name}.`);
  return values;
}

export const schemasCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const values = subcommandOptions(args, 'register');
    // Creating the runtime ensures every topic and registers its schema (BACKWARD compatibility).
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      const specs = topicSpecs(config.topicPrefix, config.kafka.partitions);
      const schemaName = (s: (typeof specs)[number]) => `${String(s.schema.namespace)}.${String(s.schema.name)}`;
      if (values.json) {
        print(
          out,
          JSON.stringify({
            runtime: config.runtime,
            schema_registry: config.runtime === 'distributed' ? config.schemaRegistryUrl : null,
            topics: specs.map((s) => ({ name: s.name, partitions: s.partitions, schema: schemaName(s) })),
          }),
        );
        return 0;
      }
      print(
        out,
        table([['TOPIC', 'PARTITIONS', 'SCHEMA'], ...specs.map((s) => [s.name, String(s.partitions), schemaName(s)])]),
      );
      print(
        out,
        config.runtime === 'distributed'
          ? `Registered ${specs.length} value schemas (subjects <topic>-value) at ${config.schemaRegistryUrl}.`
          : `The embedded log validates every event against these schemas (${String(eventSchema('uploaded').namespace)}).`,
      );
      return 0;
    } finally {
      await runtime.close();
    }
  },
};

export const reindexCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const { values } = parseArgs({
      args,
      options: { force: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
    });
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      const bar = progressBar('Re-embedding chunks');
      const report = await runtime.services.reindex.run({
        force: values.force,
        onStart: (total) => bar.start(total),
        onProgress: (done) => bar.update(done),
      });
      bar.stop();
      if (values.json) {
        print(
          out,
          JSON.stringify({
            from_model: report.fromModel,
            to_model: report.toModel,
            chunks: report.chunks,
            chunks_embedded: report.chunksEmbedded,
            chunks_from_cache: report.chunksCached,
            texts_embedded: report.textsEmbedded,
            versions: report.versions,
            forced: report.forced,
          }),
        );
        return 0;
      }
      print(out, reindexSummary(report));
      return 0;
    } finally {
      await runtime.close();
    }
  },
};

/** What `kb reindex` did, in one sentence: moved, forced, or already on the model. */
export function reindexSummary(report: ReindexReport): string {
  const texts = report.textsEmbedded === 1 ? '1 distinct text' : `${report.textsEmbedded} distinct texts`;
  const counts =
    `${report.chunksEmbedded} embedded now and ${report.chunksCached} from the vector cache ` +
    `(${texts} sent to the model); ${report.versions} versions use ${report.toModel}.`;
  if (report.forced) {
    return `Re-embedded the index with ${report.toModel} (--force): ${report.chunks} chunks, ${counts}`;
  }
  if (report.fromModel === report.toModel) {
    return `The index is already on ${report.toModel}: ${report.chunks} chunks checked, ${counts}`;
  }
  return `Index moved from ${report.fromModel ?? '(none)'} to ${report.toModel}: ${report.chunks} chunks, ${counts}`;
}

export const retentionCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const values = subcommandOptions(args, 'run');
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      const reports = await runtime.services.retention.run();
      if (values.json) {
        print(
          out,
          JSON.stringify({
            workspaces: reports.map((r) => ({
              workspace_id: r.workspaceId,
              plan: r.plan,
              cutoff: r.cutoff,
              archived: r.archived,
            })),
          }),
        );
        return 0;
      }
      if (reports.length === 0) {
        print(out, 'No workspaces hold documents.');
        return 0;
      }
      print(
        out,
        table([
          ['WORKSPACE', 'PLAN', 'CUTOFF', 'ARCHIVED'],
          ...reports.map((r) => [r.workspaceId, r.plan, r.cutoff ?? 'unlimited', String(r.archived)]),
        ]),
      );
      return 0;
    } finally {
      await runtime.close();
    }
  },
};
