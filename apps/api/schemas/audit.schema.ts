import { Type } from '@sinclair/typebox';
import { DateTime, Metadata, Nullable, Pagination, StringEnum } from './common.schema.ts';

export const AUDIT_ACTIONS = ['create', 'update', 'rollback', 'delete', 'purge', 'key_create', 'key_revoke'] as const;

export const AuditQuery = Type.Object({
  document_id: Type.Optional(Type.String({ format: 'uuid' })),
  action: Type.Optional(StringEnum(AUDIT_ACTIONS)),
  since: Type.Optional(DateTime('Entries at or after this instant.')),
  until: Type.Optional(DateTime('Entries before this instant.')),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  order: Type.Optional(
    StringEnum(['asc', 'desc'] as const, {
      default: 'asc',
      description: '`asc`: oldest first; `desc`: newest first. A `cursor` pages on in the order it came from.',
    }),
  ),
});

const Snapshot = Nullable(
  Type.Object({ version: Nullable(Type.Integer()), metadata: Nullable(Metadata) }, { title: 'AuditSnapshot' }),
);

export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    action: Type.String(),
    workspace_id: Type.String(),
    document_id: Type.String(),
    actor: Type.Object(
      {
        type: StringEnum(['api_key', 'user', 'source'] as const, {
          description:
            "Who made the change: `api_key` (its id), `user` (a dashboard account's id) or `source` (a source's sync run: the source's id).",
        }),
        id: Type.String(),
        name: Type.Optional(
          Type.String({ description: "The source's name when it made the change (type `source` only)." }),
        ),
      },
      { title: 'AuditActor' },
    ),
    timestamp: DateTime(),
    version: Nullable(Type.Integer()),
    before: Snapshot,
    after: Snapshot,
    change_reason: Nullable(Type.String()),
    trace_id: Type.String(),
  },
  { title: 'AuditEntry', description: 'One change, who made it and when.' },
);

export const AuditResponse = Type.Object(
  { entries: Type.Array(AuditEntry), pagination: Pagination },
  { title: 'AuditLog', description: 'Audit entries.' },
);
