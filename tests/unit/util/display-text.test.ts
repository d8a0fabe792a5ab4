/**
 * What counts as unsafe in a label, and how the CLI shows it: as `\uXXXX`, so a stored value can
 * neither drive the terminal nor reorder the line it is printed on.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { oneLine, print, table } from '../../../apps/cli/commands/command.ts';
import { DISPLAY_SAFE_PATTERN, escapeForDisplay, unsafeCharacter } from '../../../core/util/display-text.ts';

const refused = [
  0x00, 0x07, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x85, 0x9b, 0x9f, 0x2028, 0x2029, 0x202a, 0x202e, 0x2066, 0x2069,
];
const allowed = [0x20, 0x7e, 0xa0, 0xe9, 0x05d0, 0x200e, 0x200f, 0x061c, 0x2030, 0x2070, 0x1f600];

function collect(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe('unsafe characters', () => {
  it.each(refused.map((c) => [`U+${c.toString(16).toUpperCase().padStart(4, '0')}`, c]))('%s is refused', (name, c) => {
    const text = `a${String.fromCodePoint(c)}b`;
    expect(unsafeCharacter(text)).toBe(name);
    expect(new RegExp(DISPLAY_SAFE_PATTERN, 'u').test(text)).toBe(false);
  });

  it.each(allowed.map((c) => [`U+${c.toString(16).toUpperCase().padStart(4, '0')}`, c]))(
    '%s is allowed',
    (_name, c) => {
      const text = `a${String.fromCodePoint(c)}b`;
      expect(unsafeCharacter(text)).toBeUndefined();
      expect(new RegExp(DISPLAY_SAFE_PATTERN, 'u').test(text)).toBe(true);
    },
  );
});

describe('showing stored text in the CLI', () => {
  it('writes control characters and overrides as \\uXXXX, keeping line breaks', () => {
    const out = collect();
    print(out.stream, 'source evil\u202Etxt.exe\u0000 \u001b[2J\nnext line');
    expect(out.text()).toBe('source evil\\u202Etxt.exe\\u0000 \\u001B[2J\nnext line\n');
  });

  it('keeps JSON output JSON of the same value', () => {
    const value = { name: 'a\u202Eb\u0085c\u2066', description: 'tab\there' };
    const out = collect();
    print(out.stream, JSON.stringify(value));
    expect(out.text()).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(out.text())).toEqual(value);
  });

  it('shows a cell or an inline value on one line, and aligns the table on what is shown', () => {
    expect(oneLine('two\nlines')).toBe('two\\u000Alines');
    expect(
      table([
        ['NAME', 'KIND'],
        ['a\u202Eb', 'web'],
        ['plain', 'web'],
      ]),
    ).toBe('NAME      KIND\na\\u202Eb  web\nplain     web\n');
  });

  it('leaves ordinary text alone', () => {
    const text = 'Ünïcödé, עברית\u200F, 日本語, emoji 😀, tabs\tand "quotes"';
    expect(escapeForDisplay(text)).toBe(text.replace('\t', '\\u0009'));
  });
});
