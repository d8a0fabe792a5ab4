import { parseArgs } from 'node:util';
import { CONFIG_VARIABLES } from '../../../core/config/config.ts';
import { configTableMarkdown } from '../../../core/config/config-docs.ts';
import { type Command, print } from './command.ts';

/** `kb config`: every configuration variable with its default and meaning, as text, Markdown or JSON. */
export const configCommand: Command = {
  async run(args, { out }) {
    const { values } = parseArgs({
      args,
      options: { markdown: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
    });
    if (values.json) {
      print(
        out,
        JSON.stringify(CONFIG_VARIABLES.map((v) => ({ name: v.name, default: v.default, description: v.description }))),
      );
    } else if (values.markdown) {
      print(out, configTableMarkdown());
    } else {
      for (const v of CONFIG_VARIABLES) print(out, `${v.name}=${v.default}\n    ${v.description}`);
    }
    return 0;
  },
};
