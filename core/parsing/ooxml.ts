import { KbError } from '../errors/kb-error.ts';
import { guardZip, type ZipGuardOptions, type ZipGuardReport } from './zip-guard.ts';

const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/**
 * Runs the zip guard over an OOXML file. A password-protected Office file is not a zip but an OLE
 * compound file wrapping the encrypted package, so that is reported as `encrypted-file`; anything
 * else that is not a zip is `corrupt-file`.
 */
export async function guardOoxml(bytes: Uint8Array, kind: string, options: ZipGuardOptions): Promise<ZipGuardReport> {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(8, bytes.byteLength)).equals(OLE_MAGIC)) {
    throw new KbError('encrypted-file', `The ${kind} file is password-protected.`);
  }
  const report = await guardZip(bytes, options);
  return report;
}

/** Requires an entry name in the archive, else `corrupt-file` naming the missing part. */
export function requirePart(report: ZipGuardReport, name: string, kind: string): void {
  if (!report.entries.some((e) => e.name === name)) {
    throw new KbError('corrupt-file', `The file is not a valid ${kind}: it has no ${name}.`);
  }
}
