import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { parseSecretKey } from '../sources/secret-box.ts';

/**
 * The key that signs scoped tokens: `KB_TOKEN_SECRET` when set. Otherwise the embedded runtime
 * (one process, one data directory) keeps a random one in `<KB_DATA_DIR>/token-secret`, made on
 * first start, so tokens outlive a restart; the distributed runtime has none (its API processes
 * must share one, and only the operator can give it to them all).
 */
export function tokenSecret(config: Config): Uint8Array | null {
  if (config.tokens.secret !== null) return parseSecretKey(config.tokens.secret);
  if (config.runtime !== 'embedded') return null;
  const file = path.join(config.dataDir, 'token-secret');
  try {
    const kept = parseSecretKey(readFileSync(file, 'utf8').trim());
    if (kept) return kept;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const made = randomBytes(32);
  // `wx`: of two processes starting on the same directory at once, the second reads the first's.
  try {
    writeFileSync(file, `${made.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return made;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseSecretKey(readFileSync(file, 'utf8').trim());
  }
}
