/**
 * A byte-level JSON validator that runs incrementally over chunks, keeps no copy of the input and
 * uses no recursion, so it is safe on any nesting depth and any size. It checks the JSON grammar
 * (RFC 8259) only: UTF-8 validity of string contents is left to the caller's UTF-8 check.
 */

export interface JsonScanResult {
  /** True when the bytes seen form exactly one valid JSON value (surrounding whitespace allowed). */
  readonly valid: boolean;
  /** Deepest nesting of arrays and objects seen before the scan ended or failed. */
  readonly maxDepth: number;
}

export interface JsonScanner {
  update(chunk: Uint8Array): void;
  finish(): JsonScanResult;
}

// Scanner states.
const S_VALUE = 0; // expecting a value (top level, after ':' or after ',' in an array)
const S_AFTER_VALUE = 1; // a value just ended
const S_KEY_OR_END = 2; // right after '{'
const S_KEY = 3; // after ',' inside an object
const S_COLON = 4; // after a key
const S_VALUE_OR_END = 5; // right after '['
const S_STRING = 6;
const S_STRING_ESCAPE = 7;
const S_STRING_HEX = 8;
const S_NUMBER = 9;
const S_LITERAL = 10;
const S_DONE = 11; // the top-level value ended; only whitespace may follow
const S_INVALID = 12;

// Number sub-states.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_EXP = 5;
const N_EXP_SIGN = 6;
const N_EXP_DIGITS = 7;

const OBJECT = 1;
const ARRAY = 2;

const isWhitespace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

const LITERALS = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')] as const;

/**
 * Creates an incremental JSON validator. Feed it the file's bytes in order with `update`, then call
 * `finish`. A leading UTF-8 byte-order mark is accepted. Once the input is known to be invalid the
 * scanner stops doing work, so feeding it a large non-JSON file costs next to nothing.
 */
export function createJsonScanner(): JsonScanner {
  let state = S_VALUE;
  let numberState = N_MINUS;
  let literal: Buffer = LITERALS[0];
  let literalPos = 0;
  let hexLeft = 0;
  let stack = new Uint8Array(64);
  let depth = 0;
  let maxDepth = 0;
  let started = false;
  let bomPos = 0;
  /** True while the string being read is an object key. */
  let keyPending = false;

  const push = (kind: number): void => {
    if (depth === stack.length) {
      const bigger = new Uint8Array(stack.length * 2);
      bigger.set(stack);
      stack = bigger;
    }
    stack[depth++] = kind;
    if (depth > maxDepth) maxDepth = depth;
  };

  const endValue = (): void => {
    state = depth === 0 ? S_DONE : S_AFTER_VALUE;
  };

  /** Handles a byte in a state where a value may start; returns false if it cannot start one. */
  const startValue = (b: number): boolean => {
    if (b === 0x7b) {
      push(OBJECT);
      state = S_KEY_OR_END;
    } else if (b === 0x5b) {
      push(ARRAY);
      state = S_VALUE_OR_END;
    } else if (b === 0x22) {
      state = S_STRING;
    } else if (b === 0x2d) {
      state = S_NUMBER;
      numberState = N_MINUS;
    } else if (b === 0x30) {
      state = S_NUMBER;
      numberState = N_ZERO;
    } else if (b >= 0x31 && b <= 0x39) {
      state = S_NUMBER;
      numberState = N_INT;
    } else if (b === 0x74 || b === 0x66 || b === 0x6e) {
      literal = b === 0x74 ? LITERALS[0] : b === 0x66 ? LITERALS[1] : LITERALS[2];
      literalPos = 1;
      state = S_LITERAL;
    } else {
      return false;
    }
    return true;
  };

  /** Whether a number may end in its current sub-state. */
  const numberComplete = (): boolean =>
    numberState === N_ZERO || numberState === N_INT || numberState === N_FRAC || numberState === N_EXP_DIGITS;

  /** Handles one byte; returns false on a grammar error. */
  const step = (b: number): boolean => {
    switch (state) {
      case S_STRING:
        if (b === 0x22) {
          if (depth > 0 && stack[depth - 1] === OBJECT && keyPending) {
            keyPending = false;
            state = S_COLON;
          } else {
            endValue();
          }
          return true;
        }
        if (b === 0x5c) {
          state = S_STRING_ESCAPE;
          return true;
        }
        return b >= 0x20;
      case S_STRING_ESCAPE:
        if (b === 0x75) {
          hexLeft = 4;
          state = S_STRING_HEX;
          return true;
        }
        if (
          b === 0x22 ||
          b === 0x5c ||
          b === 0x2f ||
          b === 0x62 ||
          b === 0x66 ||
          b === 0x6e ||
          b === 0x72 ||
          b === 0x74
        ) {
          state = S_STRING;
          return true;
        }
        return false;
      case S_STRING_HEX:
        if (!isHex(b)) return false;
        hexLeft -= 1;
        if (hexLeft === 0) state = S_STRING;
        return true;
      case S_NUMBER:
        switch (numberState) {
          case N_MINUS:
            if (b === 0x30) numberState = N_ZERO;
            else if (isDigit(b)) numberState = N_INT;
            else return false;
            return true;
          case N_ZERO:
          case N_INT:
            if (numberState === N_INT && isDigit(b)) return true;
            if (b === 0x2e) {
              numberState = N_DOT;
              return true;
            }
            if (b === 0x65 || b === 0x45) {
              numberState = N_EXP;
              return true;
            }
            break;
          case N_DOT:
            if (!isDigit(b)) return false;
            numberState = N_FRAC;
            return true;
          case N_FRAC:
            if (isDigit(b)) return true;
            if (b === 0x65 || b === 0x45) {
              numberState = N_EXP;
              return true;
            }
            break;
          case N_EXP:
            if (b === 0x2b || b === 0x2d) {
              numberState = N_EXP_SIGN;
              return true;
            }
            if (!isDigit(b)) return false;
            numberState = N_EXP_DIGITS;
            return true;
          case N_EXP_SIGN:
            if (!isDigit(b)) return false;
            numberState = N_EXP_DIGITS;
            return true;
          case N_EXP_DIGITS:
            if (isDigit(b)) return true;
            break;
        }
        // The number ended at the previous byte; this byte belongs to what follows.
        if (!numberComplete()) return false;
        endValue();
        return step(b);
      case S_LITERAL:
        if (b !== literal[literalPos]) return false;
        literalPos += 1;
        if (literalPos === literal.length) endValue();
        return true;
      default:
        break;
    }
    if (isWhitespace(b)) return true;
    switch (state) {
      case S_VALUE:
        return startValue(b);
      case S_VALUE_OR_END:
        if (b === 0x5d) {
          depth -= 1;
          endValue();
          return true;
        }
        return startValue(b);
      case S_KEY_OR_END:
      case S_KEY:
        if (b === 0x7d && state === S_KEY_OR_END) {
          depth -= 1;
          endValue();
          return true;
        }
        if (b !== 0x22) return false;
        keyPending = true;
        state = S_STRING;
        return true;
      case S_COLON:
        if (b !== 0x3a) return false;
        state = S_VALUE;
        return true;
      case S_AFTER_VALUE: {
        const top = stack[depth - 1];
        if (b === 0x2c) {
          state = top === OBJECT ? S_KEY : S_VALUE;
          return true;
        }
        if ((b === 0x7d && top === OBJECT) || (b === 0x5d && top === ARRAY)) {
          depth -= 1;
          endValue();
          return true;
        }
        return false;
      }
      default:
        // S_DONE: only whitespace (handled above) may follow the top-level value.
        return false;
    }
  };

  const BOM = [0xef, 0xbb, 0xbf];

  return {
    update(chunk: Uint8Array): void {
      if (state === S_INVALID) return;
      let i = 0;
      // Skip a UTF-8 byte-order mark at the very start, even when split across chunks.
      while (!started && i < chunk.length) {
        if (bomPos < 3 && chunk[i] === BOM[bomPos]) {
          bomPos += 1;
          i += 1;
          if (bomPos === 3) started = true;
          continue;
        }
        if (bomPos > 0) {
          state = S_INVALID;
          return;
        }
        started = true;
      }
      for (; i < chunk.length; i++) {
        if (!step(chunk[i] as number)) {
          state = S_INVALID;
          return;
        }
      }
    },
    finish(): JsonScanResult {
      if (state === S_NUMBER && numberComplete()) endValue();
      return { valid: state === S_DONE, maxDepth };
    },
  };
}

/** Whether `bytes` hold exactly one valid JSON value. Iterative, so safe on any nesting depth. */
export function scanJson(bytes: Uint8Array): JsonScanResult {
  const scanner = createJsonScanner();
  scanner.update(bytes);
  return scanner.finish();
}

/** What a quick scan of a JSON text finds without parsing it. */
export interface JsonShape {
  /** Deepest array/object nesting (a value above `stopDepth` means "deeper than that"). */
  readonly depth: number;
  /** Rough count of values: commas, containers and the root (a value above `stopValues` means "more"). */
  readonly values: number;
}

/**
 * Measures a JSON text's nesting and size in values before `JSON.parse` is trusted with it:
 * strings are skipped, so brackets and commas inside them do not count. Stops early once the depth
 * exceeds `stopDepth` or the values exceed `stopValues`.
 */
export function jsonShape(
  text: string,
  stopDepth = Number.POSITIVE_INFINITY,
  stopValues = Number.POSITIVE_INFINITY,
): JsonShape {
  let depth = 0;
  let max = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x2c) {
      values += 1;
      if (values > stopValues) break;
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      values += 1;
      if (depth > max) {
        max = depth;
        if (max > stopDepth) break;
      }
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return { depth: max, values };
}
