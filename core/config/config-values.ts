/**
 * The values the enumerated variables may take. Plain constants, apart from the schema, so the
 * variable catalogue and the client configuration load without the schema library.
 */

export const RUNTIMES = ['embedded', 'distributed'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const EMBEDDING_PROVIDERS = ['local', 'transformers', 'cohere', 'openai'] as const;
export const VECTOR_QUANTIZATIONS = ['i8', 'f16', 'f32'] as const;
