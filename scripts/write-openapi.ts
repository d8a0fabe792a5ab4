/**
 * Writes the service's OpenAPI document (what `GET /openapi.json` answers, with the default local
 * address as its server) to the file named on the command line, or prints it. The clients in
 * `clients/` are generated from this file (`npm run clients:generate`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../apps/api/app.ts';
import { configFrom } from '../core/config/config.ts';
import { silentLogger } from '../core/model/logger.model.ts';
import { createRuntime } from '../core/runtime/runtime.ts';

/** The finished OpenAPI document of the API, built over a throw-away embedded runtime. */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-openapi-'));
  try {
    const config = configFrom({ KB_DATA_DIR: dataDir, KB_BOOTSTRAP_KEY: 'false', KB_LOG_LEVEL: 'silent' });
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      const app = await buildApp({ config, services: runtime.services, version: runtime.version });
      try {
        await app.ready();
        return {
          ...(app.swagger() as unknown as Record<string, unknown>),
          servers: [{ url: 'http://127.0.0.1:8080', description: 'The service on its default address' }],
        };
      } finally {
        await app.close();
      }
    } finally {
      await runtime.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  const target = process.argv[2];
  if (target) await writeFile(target, text);
  else process.stdout.write(text);
}
