import { Type } from '@sinclair/typebox';
import { NOTIFICATION_TYPES } from '../../../core/events/notifications.ts';

export const EventsQuery = Type.Object({
  types: Type.Optional(
    Type.String({
      maxLength: 500,
      description: `Comma-separated event types to receive (default: all): ${NOTIFICATION_TYPES.join(', ')}.`,
    }),
  ),
  document_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only events of this document.' })),
  last_event_id: Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'Resume after this event id; the `Last-Event-ID` header does the same (and wins).',
    }),
  ),
  workspace: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "Dashboard sessions only: the workspace to stream, one of the signed-in account's (as `X-KB-Workspace` names it). With an API key it must be the key's workspace or absent.",
    }),
  ),
});

/** The 200 answer: a stream, documented for OpenAPI readers (it is written directly, not serialised). */
export const EventStreamResponse = {
  description:
    'Server-Sent Events: each event has `id` (for `Last-Event-ID`), `event` (its type) and `data` (JSON: `{type, timestamp, data}` as webhooks carry it); a `:` comment line every `KB_EVENTS_HEARTBEAT_MS` keeps an idle stream open.',
  content: { 'text/event-stream': { schema: Type.String({ title: 'EventStream' }) } },
};
