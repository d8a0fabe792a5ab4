import { Type } from '@sinclair/typebox';
import { METADATA_LIMITS } from '../lib/metadata-input.ts';
import { DateTime, Label, Nullable, StringEnum } from './common.schema.ts';

export const SOURCE_KIND_VALUES = ['folder', 'web', 's3'] as const;

const Patterns = (what: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
    maxItems: 100,
    description: `Glob patterns (\`**\`, \`*.md\`, \`{a,b}\`) over the item's path, object key or URL; ${what}`,
  });

/** The rule of document metadata (`readSourceMetadata` checks the rest: depth, size). */
const SourceMetadata = Type.Record(Type.String({ maxLength: METADATA_LIMITS.maxKeyLength }), Type.Unknown(), {
  propertyNames: { not: { const: '__proto__' } },
  maxProperties: METADATA_LIMITS.maxKeys,
  description: 'Metadata given to every document of the source (to the versions a sync writes from now on).',
});

const Schedule = Nullable(
  Type.String({
    maxLength: 64,
    description:
      'An ISO 8601 duration between scheduled syncs (weeks, days, hours, minutes, seconds; at least 1 s), e.g. `PT15M`; null: manual only.',
  }),
);

const FolderPath = Type.String({
  minLength: 1,
  maxLength: 4096,
  description:
    '`folder`: an absolute directory on the server, under one of the roots the operator allows (KB_SOURCE_FOLDER_ROOTS); `..` segments and symlinks leading outside are refused (422).',
});

const HttpUrl = (description: string) =>
  Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description });

/** The location members of each kind: a member of another kind is refused (422). */
const LocationMembers = {
  path: Type.Optional(FolderPath),
  urls: Type.Optional(
    Type.Array(HttpUrl('A page to fetch.'), {
      minItems: 1,
      maxItems: 1000,
      description: '`web`: the pages to keep in sync (or give `sitemap`).',
    }),
  ),
  sitemap: Type.Optional(
    HttpUrl('`web`: a sitemap (or sitemap index, followed one level) whose `<loc>` pages are kept in sync.'),
  ),
  endpoint: Type.Optional(HttpUrl('`s3`: the S3-compatible endpoint, e.g. `https://s3.eu-west-1.amazonaws.com`.')),
  bucket: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: '`s3`: the bucket.' })),
  prefix: Type.Optional(
    Type.String({ maxLength: 1024, description: '`s3`: only keys under this prefix (patterns match the rest).' }),
  ),
  region: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: '`s3`: the region, when it matters.' }),
  ),
  access_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: '`s3`: with `secret_key`; stored encrypted, never shown.',
    }),
  ),
  secret_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: '`s3`: with `access_key`; stored encrypted, never shown.',
    }),
  ),
};

export const SourceIdParams = Type.Object({
  id: Type.String({ description: 'Source id (UUID). An id that is not a UUID is simply not found.' }),
});

export const RunParams = Type.Object({
  id: Type.String({ description: 'Source id (UUID).' }),
  run_id: Type.String({ description: 'Run id (UUID).' }),
});

export const CreateSourceBody = Type.Object(
  {
    name: Label({
      minLength: 1,
      maxLength: 128,
      description:
        'Unique in the workspace; becomes the `source` of every document the source synchronises. No control characters or bidirectional overrides.',
    }),
    kind: StringEnum(SOURCE_KIND_VALUES, {
      description: 'What is synchronised: a `folder` on the server, `web` pages, or an `s3` bucket.',
    }),
    ...LocationMembers,
    include: Type.Optional(Patterns('only matching items are synchronised (default: every non-hidden item).')),
    exclude: Type.Optional(Patterns('matching items are left out.')),
    metadata: Type.Optional(SourceMetadata),
    schedule: Type.Optional(Schedule),
  },
  { additionalProperties: false, title: 'CreateSourceRequest' },
);

export const PatchSourceBody = Type.Object(
  {
    ...LocationMembers,
    include: Type.Optional(Patterns('only matching items are synchronised.')),
    exclude: Type.Optional(Patterns('matching items are left out.')),
    metadata: Type.Optional(SourceMetadata),
    schedule: Type.Optional(Schedule),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'UpdateSourceRequest',
    description: 'The name and kind stay; what is given replaces what was there.',
  },
);

export const Run = Type.Object(
  {
    run_id: Type.String({ format: 'uuid' }),
    source_id: Type.String({ format: 'uuid' }),
    status: StringEnum(['running', 'completed', 'failed'] as const),
    allow_mass_delete: Type.Boolean(),
    started_at: DateTime(),
    finished_at: Nullable(DateTime()),
    counts: Type.Object({
      seen: Type.Integer({ description: 'Items the source listed (matching the patterns).' }),
      created: Type.Integer({ description: 'New documents.' }),
      updated: Type.Integer({ description: 'New versions of documents whose item changed.' }),
      unchanged: Type.Integer(),
      deleted: Type.Integer({ description: 'Documents deleted (not purged) because their item is gone.' }),
      failed: Type.Integer({ description: 'Items that failed (listed in `errors`); the run goes on.' }),
      deletions_held: Type.Integer({
        description: 'Documents whose item is gone but which were kept: too many would have been deleted.',
      }),
    }),
    errors: Type.Array(
      Type.Object({
        item: Nullable(Type.String({ description: 'The failing item; null for the run as a whole.' })),
        code: Type.String(),
        detail: Type.String(),
      }),
      { description: 'At most 200 entries; `counts.failed` counts them all.' },
    ),
  },
  { title: 'SourceRun', description: 'One synchronisation run of a source.' },
);

export const Source = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: StringEnum(['folder', 's3', 'web'] as const),
    path: Type.Optional(Type.String({ description: '`folder`: the directory, symlinks resolved.' })),
    urls: Type.Optional(Type.Array(Type.String(), { description: '`web`: the pages.' })),
    sitemap: Type.Optional(Type.String({ description: '`web`: the sitemap.' })),
    endpoint: Type.Optional(Type.String({ description: '`s3`: the endpoint.' })),
    bucket: Type.Optional(Type.String()),
    prefix: Type.Optional(Type.String()),
    region: Type.Optional(Nullable(Type.String())),
    credentials: Type.Optional(
      StringEnum(['stored', 'none'] as const, {
        description: '`s3`: whether credentials are stored (encrypted). They are never shown.',
      }),
    ),
    include: Type.Array(Type.String()),
    exclude: Type.Array(Type.String()),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    schedule: Nullable(Type.String()),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: StringEnum(['never_synced', 'running', 'completed', 'failed'] as const, {
      description: "The last run's status.",
    }),
    last_run: Nullable(Run),
  },
  { title: 'Source', description: 'A source of synchronisation and its last run.' },
);

export const SourceList = Type.Object({ sources: Type.Array(Source) }, { title: 'SourceList' });
export const RunList = Type.Object(
  { runs: Type.Array(Run, { description: 'Newest first.' }) },
  { title: 'SourceRunList' },
);

export const SyncQuery = Type.Object({
  allow_mass_delete: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Let this run delete documents even when more than KB_SOURCE_MAX_DELETE_FRACTION of the source would go.',
    }),
  ),
});

export const SyncStarted = Type.Object(
  {
    run_id: Type.String({ format: 'uuid' }),
    status: Type.Literal('running'),
  },
  { title: 'SyncStarted', description: 'The run that was started.' },
);

export const DeleteSourceQuery = Type.Object({
  delete_documents: Type.Optional(
    Type.Boolean({ default: false, description: 'Also delete (not purge) the documents of the source.' }),
  ),
});

export const RunsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});
