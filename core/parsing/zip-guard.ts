import { createInflateRaw } from 'node:zlib';
import { KbError } from '../errors/kb-error.ts';

/** Limits a zip archive must stay within before any OOXML library opens it. */
export interface ZipGuardLimits {
  /** Most entries in the central directory. */
  readonly maxEntries: number;
  /** Largest uncompressed size of one entry, declared or real. */
  readonly maxEntryBytes: number;
  /** Largest uncompressed total of all entries, declared or real. */
  readonly maxTotalBytes: number;
  /** Highest declared uncompressed/compressed ratio for an entry of at least `ratioMinBytes`. */
  readonly maxRatio: number;
  readonly ratioMinBytes: number;
  /** Refuse XML parts that declare a DTD or entities (entity-expansion attacks). */
  readonly rejectDtd: boolean;
}

export const DEFAULT_ZIP_LIMITS: ZipGuardLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 200 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
  maxRatio: 500,
  ratioMinBytes: 1024 * 1024,
  rejectDtd: true,
};

export interface ZipEntryInfo {
  readonly name: string;
  /** 0 stored, 8 deflated. */
  readonly method: number;
  readonly flags: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly localHeaderOffset: number;
}

export interface ZipGuardOptions {
  readonly limits?: Partial<ZipGuardLimits>;
  /**
   * Called once per entry before it is inflated; a returned function receives every inflated chunk
   * of that entry (e.g. to count worksheet rows). Throwing from it aborts the guard with that error.
   */
  readonly inspect?: (entry: ZipEntryInfo) => ((chunk: Buffer) => void) | undefined;
}

export interface ZipGuardReport {
  readonly entries: readonly ZipEntryInfo[];
  /** Real inflated bytes of all entries. */
  readonly totalBytes: number;
}

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;

const corrupt = (message: string): KbError => new KbError('corrupt-file', message);
const bomb = (message: string): KbError => new KbError('decompression-bomb', message);

const mib = (bytes: number): string => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

function readUint64(buf: Buffer, at: number): number {
  const value = buf.readBigUInt64LE(at);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('The zip archive declares an impossible size.');
  return Number(value);
}

/**
 * Reads the central directory (end-of-central-directory record, ZIP64 when present, then every
 * entry) and checks the declared entry count, sizes and ratios against the limits. Throws
 * `corrupt-file` for a broken archive, `encrypted-file` for an encrypted entry and
 * `decompression-bomb` when a declared figure exceeds a limit.
 */
export function readCentralDirectory(bytes: Uint8Array, limits: ZipGuardLimits = DEFAULT_ZIP_LIMITS): ZipEntryInfo[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 22) throw corrupt('The file is too short to be a zip archive.');
  let eocd = -1;
  const lowest = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= lowest; i--) {
    if (buf.readUInt32LE(i) === SIG_EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd === -1) throw corrupt('The zip archive has no end-of-central-directory record (truncated?).');

  let entryCount = buf.readUInt16LE(eocd + 10);
  let cdSize = buf.readUInt32LE(eocd + 12);
  let cdOffset = buf.readUInt32LE(eocd + 16);
  if (entryCount === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || buf.readUInt32LE(locator) !== SIG_ZIP64_LOCATOR) {
      throw corrupt('The zip archive lacks its ZIP64 locator.');
    }
    const zip64 = readUint64(buf, locator + 8);
    if (zip64 + 56 > buf.length || buf.readUInt32LE(zip64) !== SIG_ZIP64_EOCD) {
      throw corrupt('The zip archive has a broken ZIP64 record.');
    }
    entryCount = readUint64(buf, zip64 + 32);
    cdSize = readUint64(buf, zip64 + 40);
    cdOffset = readUint64(buf, zip64 + 48);
  }
  if (entryCount > limits.maxEntries) {
    throw bomb(`The archive has ${entryCount} entries; the limit is ${limits.maxEntries}.`);
  }
  if (cdOffset + cdSize > buf.length) throw corrupt('The zip central directory lies outside the file.');

  const entries: ZipEntryInfo[] = [];
  let declaredTotal = 0;
  let pos = cdOffset;
  for (let n = 0; n < entryCount; n++) {
    if (pos + 46 > buf.length || buf.readUInt32LE(pos) !== SIG_CENTRAL) {
      throw corrupt('The zip central directory is broken.');
    }
    const flags = buf.readUInt16LE(pos + 8);
    const method = buf.readUInt16LE(pos + 10);
    let compressedSize = buf.readUInt32LE(pos + 20);
    let uncompressedSize = buf.readUInt32LE(pos + 24);
    const nameLength = buf.readUInt16LE(pos + 28);
    const extraLength = buf.readUInt16LE(pos + 30);
    const commentLength = buf.readUInt16LE(pos + 32);
    let localHeaderOffset = buf.readUInt32LE(pos + 42);
    const nameEnd = pos + 46 + nameLength;
    const extraEnd = nameEnd + extraLength;
    if (extraEnd + commentLength > buf.length) throw corrupt('The zip central directory is truncated.');
    const name = buf.toString('utf8', pos + 46, nameEnd);

    // ZIP64 extended information: only the fields saturated in the fixed header are present.
    let e = nameEnd;
    while (e + 4 <= extraEnd) {
      const id = buf.readUInt16LE(e);
      const size = buf.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let f = e + 4;
        if (uncompressedSize === 0xffffffff && f + 8 <= e + 4 + size) {
          uncompressedSize = readUint64(buf, f);
          f += 8;
        }
        if (compressedSize === 0xffffffff && f + 8 <= e + 4 + size) {
          compressedSize = readUint64(buf, f);
          f += 8;
        }
        if (localHeaderOffset === 0xffffffff && f + 8 <= e + 4 + size) localHeaderOffset = readUint64(buf, f);
      }
      e += 4 + size;
    }

    if (flags & 0x01) throw new KbError('encrypted-file', `The archive entry ${name} is encrypted.`);
    if (method !== 0 && method !== 8) {
      throw new KbError('unsupported-content', `The archive entry ${name} uses compression method ${method}.`);
    }
    if (uncompressedSize > limits.maxEntryBytes) {
      throw bomb(`The entry ${name} declares ${mib(uncompressedSize)}; the limit is ${mib(limits.maxEntryBytes)}.`);
    }
    if (uncompressedSize >= limits.ratioMinBytes && uncompressedSize / Math.max(compressedSize, 1) > limits.maxRatio) {
      throw bomb(`The entry ${name} declares a compression ratio above ${limits.maxRatio}:1.`);
    }
    declaredTotal += uncompressedSize;
    if (declaredTotal > limits.maxTotalBytes) {
      throw bomb(`The archive declares more than ${mib(limits.maxTotalBytes)} uncompressed.`);
    }
    entries.push({ name, method, flags, compressedSize, uncompressedSize, localHeaderOffset });
    pos = extraEnd + commentLength;
  }
  return entries;
}

const DTD_MARKERS = [Buffer.from('<!DOCTYPE'), Buffer.from('<!ENTITY')];
const isXmlPart = (name: string): boolean => /\.(xml|rels|vml)$/i.test(name);

/**
 * Checks a zip archive before any library inflates it: the central directory's declared figures
 * first ({@link readCentralDirectory}), then every entry is stream-inflated and its real bytes
 * counted, aborting with `decompression-bomb` as soon as an entry or the total passes its limit
 * (an archive can lie in its headers) and with `corrupt-file` when an entry inflates to a size other
 * than declared. XML parts that declare a DTD or entities fail with `unsupported-content`.
 */
export async function guardZip(bytes: Uint8Array, options: ZipGuardOptions = {}): Promise<ZipGuardReport> {
  const limits: ZipGuardLimits = { ...DEFAULT_ZIP_LIMITS, ...options.limits };
  const entries = readCentralDirectory(bytes, limits);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let total = 0;

  for (const entry of entries) {
    const at = entry.localHeaderOffset;
    if (at + 30 > buf.length || buf.readUInt32LE(at) !== SIG_LOCAL) {
      throw corrupt(`The local header of ${entry.name} is missing.`);
    }
    const dataStart = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
    const dataEnd = dataStart + entry.compressedSize;
    if (dataEnd > buf.length) throw corrupt(`The data of ${entry.name} runs past the end of the file.`);
    const data = buf.subarray(dataStart, dataEnd);
    const inspector = options.inspect?.(entry);
    const checkDtd = limits.rejectDtd && isXmlPart(entry.name);
    let tail = Buffer.alloc(0);
    let entryBytes = 0;

    const onChunk = (chunk: Buffer): void => {
      entryBytes += chunk.length;
      total += chunk.length;
      if (entryBytes > limits.maxEntryBytes) {
        throw bomb(`The entry ${entry.name} inflates past ${mib(limits.maxEntryBytes)}.`);
      }
      if (total > limits.maxTotalBytes) {
        throw bomb(`The archive inflates past ${mib(limits.maxTotalBytes)}.`);
      }
      if (entryBytes > entry.uncompressedSize && entryBytes > limits.ratioMinBytes) {
        throw bomb(`The entry ${entry.name} inflates beyond its declared size of ${entry.uncompressedSize} bytes.`);
      }
      if (checkDtd) {
        const window = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
        if (DTD_MARKERS.some((m) => window.includes(m))) {
          throw new KbError(
            'unsupported-content',
            `The XML part ${entry.name} declares a DTD or entities, which are not accepted.`,
          );
        }
        tail = Buffer.from(window.subarray(Math.max(0, window.length - 16)));
      }
      inspector?.(chunk);
    };

    if (entry.method === 0) {
      onChunk(data);
    } else {
      await inflateCounted(data, onChunk, entry.name);
    }
    if (entryBytes !== entry.uncompressedSize) {
      throw corrupt(`The entry ${entry.name} inflates to ${entryBytes} bytes but declares ${entry.uncompressedSize}.`);
    }
  }
  return { entries, totalBytes: total };
}

/** Inflates raw deflate data chunk by chunk; `onChunk` may throw to abort at once. */
function inflateCounted(data: Buffer, onChunk: (chunk: Buffer) => void, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const inflate = createInflateRaw({ chunkSize: 64 * 1024 });
    let failed = false;
    inflate.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        onChunk(chunk);
      } catch (error) {
        failed = true;
        inflate.destroy();
        reject(error);
      }
    });
    inflate.on('error', () => {
      if (failed) return;
      failed = true;
      reject(corrupt(`The entry ${name} is not valid deflate data.`));
    });
    inflate.on('end', () => {
      if (!failed) resolve();
    });
    inflate.end(data);
  });
}
