/**
 * The configuration catalogue as Markdown: the table `kb config --markdown` prints and the page
 * `docs/configuration.md` (written by `npm run docs:config`; a test fails when the committed page
 * differs), so the documentation cannot drift from the variables the service reads.
 */
import { CONFIG_VARIABLES } from './config-variables.ts';

/** One row per variable: name, default (`(empty)` when empty) and meaning. */
export function configTableMarkdown(): string {
  const rows = CONFIG_VARIABLES.map(
    (v) => `| \`${v.name}\` | ${v.default === '' ? '(empty)' : `\`${v.default}\``} | ${v.description} |`,
  );
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The whole of `docs/configuration.md`. */
export function configurationPage(): string {
  return `# Configuration

<!-- Generated from core/config/config-variables.ts by \`npm run docs:config\`; edit the catalogue, not this page. -->

All configuration comes from environment variables, validated at start-up (every invalid variable is
reported at once, and the service does not start). \`kb config\` prints every variable with its default and
meaning (\`--markdown\` for this table, \`--json\` for tools). Every variable the service reads is listed here.

${configTableMarkdown()}
`;
}
