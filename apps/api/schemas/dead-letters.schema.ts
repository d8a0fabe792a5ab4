import { Type } from '@sinclair/typebox';
import { STAGE_NAMES } from '../../../core/events/events.ts';
import { DateTime, Nullable, StringEnum } from './common.schema.ts';

const Stage = StringEnum(STAGE_NAMES, { description: 'Only the dead letters of this stage.' });

export const DeadLettersQuery = Type.Object({
  stage: Type.Optional(Stage),
  state: Type.Optional(
    StringEnum(['pending', 'replayed', 'all'] as const, {
      default: 'all',
      description: '`pending`: not replayed yet; `replayed`: replayed (or skipped by a replay); `all`.',
    }),
  ),
});

export const ReplayDeadLettersBody = Type.Object(
  { stage: Type.Optional(Stage) },
  { additionalProperties: false, title: 'DeadLetterReplayRequest' },
);

const DeadLetterReplayRecord = Type.Object(
  {
    at: DateTime(),
    outcome: StringEnum(['replayed', 'skipped'] as const, {
      description:
        '`replayed`: the event went back to its stage; `skipped`: nothing left to re-drive (the version completed or is gone).',
    }),
    detail: Type.String({ description: 'Why the replay was skipped; empty when replayed.' }),
    by: Type.String({ description: 'Who replayed it: an account or key id, or `cli`.' }),
  },
  { title: 'DeadLetterReplayRecord' },
);

export const DeadLetter = Type.Object(
  {
    id: Type.String({ description: 'Id of the dead letter (every copy left by a redelivered event shares it).' }),
    stage: StringEnum(STAGE_NAMES),
    document_id: Nullable(Type.String()),
    workspace_id: Nullable(Type.String()),
    version: Nullable(Type.Integer()),
    error_code: Type.String({ description: 'Error catalogue code, e.g. `corrupt-file`.' }),
    error_message: Type.String(),
    attempts: Type.Integer({ description: 'Attempts the stage spent (waits for unavailable engines spend none).' }),
    dead_lettered_at: DateTime(),
    source: Type.Object({ topic: Type.String(), partition: Type.Integer(), offset: Type.String() }),
    copies: Type.Integer({ description: 'How many times the dead-letter topic holds it.' }),
    replay: Nullable(DeadLetterReplayRecord),
  },
  { title: 'DeadLetter', description: 'An event a stage gave up on, with the failure.' },
);

const DeadLetterCount = Type.Object(
  {
    stage: StringEnum(STAGE_NAMES),
    total: Type.Integer({ description: 'Dead letters retained.' }),
    pending: Type.Integer({ description: 'Of those, not replayed yet.' }),
  },
  { title: 'DeadLetterCount' },
);

export const DeadLetterList = Type.Object(
  {
    dead_letters: Type.Array(DeadLetter, { description: 'Oldest first.' }),
    counts: Type.Array(DeadLetterCount, { description: 'Per stage, whatever `state` is.' }),
  },
  { title: 'DeadLetterList' },
);

export const DeadLetterReplayResult = Type.Object(
  {
    replayed: Type.Integer({ description: 'Dead letters whose event went back to its stage.' }),
    skipped: Type.Integer({ description: 'Dead letters with nothing left to re-drive, recorded as replayed.' }),
    dead_letters: Type.Array(DeadLetter, { description: 'Each dead letter this replay handled.' }),
  },
  { title: 'DeadLetterReplayResult' },
);
