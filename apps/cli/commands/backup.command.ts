import { parseArgs } from 'node:util';
import { type BackupService, createBackupService } from '../../../core/backup/backup.service.ts';
import type { BackupManifest } from '../../../core/backup/backup-format.ts';
import { openBackupLocation } from '../../../core/backup/backup-location.ts';
import type { BackupProgress } from '../../../core/backup/backup-parts.ts';
import type { Config } from '../../../core/config/config.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { type Command, print } from './command.ts';
import { CommandLineError } from './help.ts';
import { progressBar } from './progress.ts';

/**
 * The runtime a backup or restore works through: no stages, and on the embedded runtime no
 * derived search indexes (a backup reads records; after a restore the serving process builds its
 * keyword and vector indexes from the restored chunks).
 */
async function withBackupService<T>(config: Config, body: (service: BackupService) => Promise<T>): Promise<T> {
  const runtimeConfig: Config =
    config.runtime === 'embedded' ? { ...config, vectorIndex: null, keywordIndex: null } : config;
  const runtime = await createRuntime(runtimeConfig, { stages: 'none', logger: silentLogger });
  try {
    const { documents, objects, accountStore, sources, webhooks } = runtime.ports;
    return await body(
      createBackupService({
        stores: { documents, objects, accountStore, sources, webhooks },
        runtime: config.runtime,
        openLocation: (location, purpose) => openBackupLocation(location, purpose, config),
      }),
    );
  } finally {
    await runtime.close();
  }
}

/** A progress bar that restarts for each phase of the work. */
function phaseBar(label: string) {
  let bar: ReturnType<typeof progressBar> | null = null;
  let phase = '';
  return {
    update(progress: BackupProgress) {
      if (progress.phase !== phase || bar === null) {
        bar?.stop();
        phase = progress.phase;
        bar = progressBar(`${label}: ${phase}`);
        bar.start(progress.total);
      }
      bar.update(progress.done);
    },
    stop() {
      bar?.stop();
    },
  };
}

function manifestJson(manifest: BackupManifest) {
  return {
    id: manifest.id,
    at: manifest.at,
    exact: manifest.exact,
    runtime: manifest.runtime,
    started_at: manifest.startedAt,
    finished_at: manifest.finishedAt,
    previous: manifest.previous,
    index_model: manifest.indexModel,
    counts: manifest.counts,
    written: manifest.written,
    missing_objects: manifest.missingObjects,
  };
}

function countsLine(manifest: BackupManifest): string {
  const c = manifest.counts;
  return (
    `${c.documents} documents, ${c.versions} versions, ${c.chunks} chunks (${c.vectors} vectors), ${c.objects} files, ` +
    `${c.keys} keys, ${c.users} accounts, ${c.audit} audit entries, ${c.sources} sources, ${c.webhooks} webhooks`
  );
}

function location(positionals: string[], what: string): string {
  const [first, extra] = positionals;
  if (first === undefined) throw new CommandLineError(`name the ${what}: a folder or s3://bucket/prefix.`);
  if (extra !== undefined) throw new CommandLineError(`unexpected argument "${extra}".`);
  return first;
}

export const backupCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false } },
    });
    if (positionals[0] === 'verify') {
      const source = location(positionals.slice(1), 'backup to verify');
      return withBackupService(config, async (service) => {
        const bar = phaseBar('Verifying');
        const report = await service.verify(source, (p) => bar.update(p)).finally(() => bar.stop());
        const ok = report.problems.length === 0;
        if (values.json) {
          print(out, JSON.stringify({ ok, ...manifestJson(report.manifest), problems: report.problems }));
        } else if (ok) {
          print(
            out,
            `Backup ${report.manifest.id} (${report.manifest.at}) is complete: ${countsLine(report.manifest)}.`,
          );
        } else {
          print(out, `Backup ${report.manifest.id} is damaged or incomplete; a restore would refuse it:`);
          for (const p of report.problems)
            print(out, `  ${p.path}: ${p.problem === 'missing' ? 'missing' : `wrong ${p.problem}`}`);
        }
        return ok ? 0 : 1;
      });
    }
    const destination = location(positionals, 'backup destination');
    return withBackupService(config, async (service) => {
      const bar = phaseBar('Backing up');
      const manifest = await service.backup(destination, (p) => bar.update(p)).finally(() => bar.stop());
      if (values.json) {
        print(out, JSON.stringify(manifestJson(manifest)));
        return 0;
      }
      print(out, `Backup ${manifest.id} of ${manifest.at} written to ${destination}: ${countsLine(manifest)}.`);
      print(
        out,
        `Copied ${manifest.written.files} files (${manifest.written.bytes} bytes); the rest was there already.`,
      );
      if (manifest.missingObjects.length > 0) {
        print(out, `${manifest.missingObjects.length} files were gone when copied (their documents purged meanwhile).`);
      }
      return 0;
    });
  },
};

export const restoreCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { force: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
    });
    const source = location(positionals, 'backup to restore');
    return withBackupService(config, async (service) => {
      const bar = phaseBar('Restoring');
      const manifest = await service
        .restore(source, { force: values.force, onProgress: (p) => bar.update(p) })
        .finally(() => bar.stop());
      if (values.json) {
        print(out, JSON.stringify({ restored: true, ...manifestJson(manifest) }));
        return 0;
      }
      print(out, `Restored backup ${manifest.id} of ${manifest.at} (${config.runtime}): ${countsLine(manifest)}.`);
      return 0;
    });
  },
};
