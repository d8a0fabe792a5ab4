import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';

const VERSION = 'v1';

/**
 * Secrets at rest (a source's credentials): AES-256-GCM under the operator's key, as
 * `v1:<base64 of iv ‖ tag ‖ ciphertext>`. Decrypting with another key, or a changed text, fails.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** The operator's key: 32 bytes as 64 hex digits or base64. */
export function parseSecretKey(text: string): Buffer | null {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  return key.length === 32 ? key : null;
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed) {
      const [version, data] = sealed.split(':');
      if (version !== VERSION || !data) throw new KbError('internal-error', 'A stored secret has an unknown form.');
      const raw = Buffer.from(data, 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch (error) {
        throw new KbError(
          'source-unreachable',
          'The stored credentials cannot be decrypted (was KB_SOURCE_SECRET_KEY changed?).',
          {
            cause: error,
            retriable: false,
          },
        );
      }
    },
  };
}
