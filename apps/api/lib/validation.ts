/**
 * Schema validation: two Ajv instances.
 * - Query strings, path parameters and headers are strings on the wire, so they are coerced
 *   (`"20"` → 20, `"true"` → true) and the first error is enough (→ 400 `bad-request`).
 * - JSON bodies are not coerced (`"limit": "10"` is an error, not 10) and every failed field is
 *   collected (→ 422 `validation-error` listing them). Body size is bounded by `bodyLimit`.
 * Defaults from the schemas are applied in both; unknown members are rejected where a schema
 * says `additionalProperties: false`, never silently dropped.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler } from 'fastify';

type CompileInput = { schema: FastifySchema; method: string; url: string; httpPart?: string };
type Compile = (input: CompileInput) => ReturnType<FastifySchemaCompiler<FastifySchema>>;

export function installValidators(app: FastifyInstance): void {
  const factory = AjvCompiler();
  const bodyCompile = factory(
    {},
    {
      customOptions: { coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: true },
    },
  ) as unknown as Compile;
  const paramCompile = factory(
    {},
    {
      customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false },
    },
  ) as unknown as Compile;
  app.setValidatorCompiler((input) =>
    input.httpPart === 'body' ? bodyCompile(input as CompileInput) : paramCompile(input as CompileInput),
  );
}
