/**
 * Characters that must not reach a person's screen raw from a label someone else typed (a source
 * name, a webhook description, a key name …): they can hide text, end a line, move the cursor or
 * reorder what follows, so a label could pass for another.
 *
 * - C0 controls U+0000–U+001F (NUL, line breaks, ESC of terminal escape sequences), DEL U+007F
 *   and the C1 controls U+0080–U+009F;
 * - the bidirectional embeddings and overrides U+202A–U+202E and isolates U+2066–U+2069 (which
 *   reorder the text after them);
 * - the line and paragraph separators U+2028 and U+2029.
 *
 * The invisible marks U+200E, U+200F and U+061C (LRM, RLM, ALM) are left alone: right-to-left text
 * needs them, and they reorder nothing but the neutral characters next to them.
 */

import { KbError } from '../errors/kb-error.ts';

/** The refused characters as the body of a regular-expression character class. */
const UNSAFE_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028-\\u202e\\u2066-\\u2069';

const UNSAFE = new RegExp(`[${UNSAFE_CLASS}]`, 'u');
const UNSAFE_ALL = new RegExp(`[${UNSAFE_CLASS}]`, 'gu');
const UNSAFE_BUT_NEWLINE = new RegExp(
  `[${UNSAFE_CLASS.replace('\\u0000-\\u001f', '\\u0000-\\u0009\\u000b-\\u001f')}]`,
  'gu',
);

/** A JSON Schema `pattern` that a string without any of the refused characters matches. */
export const DISPLAY_SAFE_PATTERN = `^[^${UNSAFE_CLASS}]*$`;

/** What a refusal says about the field (after its name). */
export const DISPLAY_SAFE_MESSAGE =
  'must not contain control characters (U+0000–U+001F, U+007F–U+009F), bidirectional overrides or isolates (U+202A–U+202E, U+2066–U+2069) or line separators (U+2028, U+2029)';

const hex = (char: string) => (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');

/** The first refused character of `text` as `U+XXXX`, or undefined when there is none. */
export function unsafeCharacter(text: string): string | undefined {
  const found = UNSAFE.exec(text);
  return found ? `U+${hex(found[0])}` : undefined;
}

/** Why `text` cannot be a label (the message for its field, naming the character), or undefined. */
export function displayTextProblem(text: string): string | undefined {
  const found = unsafeCharacter(text);
  return found === undefined ? undefined : `${DISPLAY_SAFE_MESSAGE}; found ${found}`;
}

/** Throws `validation-error` (422) naming `field` when `value` holds a refused character. */
export function checkDisplayText(field: string, value: string | null | undefined): void {
  const problem = value == null ? undefined : displayTextProblem(value);
  if (problem !== undefined) {
    throw new KbError('validation-error', `${field} ${problem}.`, { errors: [{ field, message: problem }] });
  }
}

/**
 * `text` with each refused character written as `\uXXXX`, for a terminal; line breaks are kept
 * unless `oneLine`. Text that is JSON stays JSON of the same value (the characters are only ever
 * inside strings there, and `\uXXXX` is a JSON escape).
 */
export function escapeForDisplay(text: string, options: { readonly oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine ? UNSAFE_ALL : UNSAFE_BUT_NEWLINE, (char) => `\\u${hex(char)}`);
}
