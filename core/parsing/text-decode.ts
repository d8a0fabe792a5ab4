import { KbError } from '../errors/kb-error.ts';
import { normaliseNewlines } from './document-builder.ts';

/**
 * Decodes UTF-8 bytes strictly (invalid sequences are `corrupt-file`), drops a BOM and normalises
 * line endings. NUL bytes are refused too: text types never contain them.
 */
export function decodeUtf8Text(bytes: Uint8Array): string {
  if (bytes.indexOf(0) !== -1) throw new KbError('corrupt-file', 'The text file contains NUL bytes.');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new KbError('corrupt-file', 'The text file is not valid UTF-8.');
  }
  return normaliseNewlines(text);
}
