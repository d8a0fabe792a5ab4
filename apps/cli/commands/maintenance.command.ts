import { parseArgs } from 'node:util';
import { eventSchema, topicSpecs } from '../../../pipeline/events/events.ts';
import { createRuntime } from '../../../pipeline/runtime/runtime.ts';
import { reindex } from '../../../pipeline/services/reindex.service.ts';
import { runRetention } from '../../../pipeline/services/retention.service.ts';
import { type Command, print, table } from './command.ts';
import { progressBar } from './progress.ts';

const quiet = { info() {}, debug() {}, warn() {}, error() {} };

export const schemasCommand: Command = {
  summary: 'Register the Avro event schemas and create the topics',
  usage: 'kb schemas register',
  async run(args, { config, out, err }) {
    if (args[0] !== 'register') {
      print(err, `Usage: ${this.usage}`);
      return 2;
    }
    // Creating the runtime ensures every topic and registers its schema (BACKWARD compatibility).
    const runtime = await createRuntime(config, { stages: 'none', logger: quiet });
    try {
      const specs = topicSpecs(config.topicPrefix, config.kafka.partitions);
      print(
        out,
        table([
          ['TOPIC', 'PARTITIONS', 'SCHEMA'],
          ...specs.map((s) => [s.name, String(s.partitions), `${String(s.schema.namespace)}.${String(s.schema.name)}`]),
        ]),
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
  summary: 'Re-embed every stored chunk with the configured embedding model',
  usage: 'kb reindex [--force]',
  async run(args, { config, out }) {
    const { values } = parseArgs({ args, options: { force: { type: 'boolean', default: false } } });
    const runtime = await createRuntime(config, { stages: 'none', logger: quiet });
    try {
      const provider = await runtime.ports.getEmbeddings();
      const bar = progressBar('Re-embedding chunks');
      const report = await reindex(
        { documents: runtime.ports.documents, provider, batchSize: config.embedding.batchSize },
        { force: values.force, onStart: (total) => bar.start(total), onProgress: (done) => bar.update(done) },
      );
      bar.stop();
      print(
        out,
        `Index moved from ${report.fromModel ?? '(none)'} to ${report.toModel}: ${report.chunks} chunks, ` +
          `${report.embedded} embedded, ${report.cached} from the vector cache.`,
      );
      return 0;
    } finally {
      await runtime.close();
    }
  },
};

export const retentionCommand: Command = {
  summary: "Archive versions older than the workspace plan's retention",
  usage: 'kb retention run',
  async run(args, { config, out, err }) {
    if (args[0] !== 'run') {
      print(err, `Usage: ${this.usage}`);
      return 2;
    }
    const runtime = await createRuntime(config, { stages: 'none', logger: quiet });
    try {
      const reports = await runRetention({ documents: runtime.ports.documents, control: runtime.ports.control });
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
