import { KbError } from '../errors/kb-error.ts';
import { normaliseNewlines } from './document-builder.ts';

/** The UTF-16 encoding a byte order mark at the start of `bytes` names, or null. */
export function utf16ByteOrder(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  if (bytes.length < 2) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/**
 * Decodes text strictly, drops its byte order mark and normalises line endings: UTF-16 (little or
 * big endian) when a BOM says so, else UTF-8. Invalid sequences (an odd byte of UTF-16, an
 * unpaired surrogate, bad UTF-8) are `corrupt-file`; so is a NUL character, which text never holds.
 */
export function decodeText(bytes: Uint8Array): string {
  const utf16 = utf16ByteOrder(bytes);
  if (utf16 === null && bytes.indexOf(0) !== -1) throw new KbError('corrupt-file', 'The text file contains NUL bytes.');
  let text: string;
  try {
    text = new TextDecoder(utf16 ?? 'utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new KbError('corrupt-file', `The text file is not valid ${utf16 === null ? 'UTF-8' : 'UTF-16'}.`);
  }
  if (utf16 !== null && text.includes('\0'))
    throw new KbError('corrupt-file', 'The text file contains NUL characters.');
  return normaliseNewlines(text);
}
