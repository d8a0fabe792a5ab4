import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum } from './common.schema.ts';

const CheckStatus = StringEnum(['healthy', 'degraded', 'unhealthy'] as const, { title: 'CheckStatus' });

export const Liveness = Type.Object(
  { status: Type.Literal('healthy'), service: Type.String() },
  { title: 'Liveness', description: 'The process is up.' },
);

const Check = Type.Object(
  { status: CheckStatus, latency_ms: Nullable(Type.Number()), message: Type.String() },
  { title: 'HealthCheck' },
);

export const Readiness = Type.Object(
  {
    status: CheckStatus,
    timestamp: DateTime(),
    version: Type.String(),
    service: Type.String(),
    checks: Type.Record(Type.String(), Check, {
      description: '`database`, `vector_store`, and the message log and object store.',
    }),
  },
  { title: 'Readiness', description: 'Dependency checks.' },
);
