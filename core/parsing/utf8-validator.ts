/**
 * Streaming UTF-8 validation without decoding: each chunk is checked with `buffer.isUtf8` (native,
 * no string is built), except a multi-byte sequence cut off at the chunk's end, which is carried
 * over and checked together with the continuation bytes that start the next chunk. The rules are
 * those of a fatal `TextDecoder` (no overlong forms, no surrogates, nothing above U+10FFFF).
 */
import { isUtf8 } from 'node:buffer';

export interface Utf8Validator {
  /** Feeds the next chunk. Once the stream is invalid, further chunks cost nothing. */
  update(chunk: Uint8Array): void;
  /** False once a chunk held an invalid sequence (an unfinished one at the end does not count yet). */
  readonly valid: boolean;
  /** Ends the stream: whether every byte seen was valid UTF-8 and no sequence was left unfinished. */
  finish(): boolean;
}

/** Length of the sequence a lead byte starts, or 0 for a continuation or an invalid byte. */
function sequenceLength(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

/** Where the unfinished sequence at the end of `bytes` starts, or `bytes.length` when there is none. */
function unfinishedTail(bytes: Uint8Array): number {
  const end = bytes.length;
  // A sequence is at most 4 bytes: look back over at most 3 continuation bytes for its lead.
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const byte = bytes[i] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = sequenceLength(byte);
    return length > end - i ? i : end;
  }
  return end;
}

export function createUtf8Validator(): Utf8Validator {
  let valid = true;
  /** Bytes of a sequence the previous chunk cut off (at most 3). */
  let carry: Uint8Array | null = null;

  return {
    get valid() {
      return valid;
    },
    update(chunk: Uint8Array): void {
      if (!valid || chunk.length === 0) return;
      let start = 0;
      if (carry !== null) {
        const needed = sequenceLength(carry[0] as number) - carry.length;
        const take = Math.min(needed, chunk.length);
        const joined = new Uint8Array(carry.length + take);
        joined.set(carry);
        joined.set(chunk.subarray(0, take), carry.length);
        if (take < needed) {
          // Still unfinished (a chunk of one or two bytes): the joined bytes must be continuations.
          for (let i = carry.length; i < joined.length; i++) {
            if (((joined[i] as number) & 0xc0) !== 0x80) {
              valid = false;
              return;
            }
          }
          carry = joined;
          return;
        }
        carry = null;
        if (!isUtf8(joined)) {
          valid = false;
          return;
        }
        start = take;
      }
      const rest = chunk.subarray(start);
      const cut = unfinishedTail(rest);
      if (!isUtf8(rest.subarray(0, cut))) {
        valid = false;
        return;
      }
      if (cut < rest.length) carry = rest.slice(cut);
    },
    finish(): boolean {
      if (carry !== null) valid = false;
      carry = null;
      return valid;
    },
  };
}
