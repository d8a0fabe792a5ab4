import { Type } from '@sinclair/typebox';
import { NOTIFICATION_TYPES } from '../../../core/events/notifications.ts';
import { DateTime, Label, Nullable, StringEnum } from './common.schema.ts';

const EventTypes = Type.Array(StringEnum([...NOTIFICATION_TYPES, '*'] as const), {
  minItems: 1,
  maxItems: 20,
  description: 'Event types the endpoint receives; `["*"]` for every type (including types added later).',
});

const Description = Label({
  maxLength: 500,
  description: 'What the endpoint is for. No control characters or bidirectional overrides.',
});

const Url = Type.String({
  minLength: 8,
  maxLength: 2048,
  description:
    'http(s) URL receiving POSTs. Loopback, private and link-local targets are refused (422) unless the operator set KB_OUTBOUND_ALLOW_PRIVATE=true.',
});

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: EventTypes,
    description: Type.Optional(Nullable(Description)),
  },
  { additionalProperties: false, title: 'CreateWebhookRequest' },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Description)),
    enabled: Type.Optional(Type.Boolean({ description: '`false` disables the endpoint; `true` enables it again.' })),
    rotate_secret: Type.Optional(
      Type.Boolean({ description: '`true` replaces the signing secret; the answer shows the new one, once.' }),
    ),
  },
  { additionalProperties: false, title: 'UpdateWebhookRequest' },
);

export const WebhookIdParams = Type.Object({ id: Type.String({ description: 'Webhook endpoint id.' }) });
export const DeliveryParams = Type.Object({
  id: Type.String({ description: 'Webhook endpoint id.' }),
  delivery_id: Type.String({ description: 'Delivery id.' }),
});
export const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(
      Type.String({ description: 'Why it is disabled (by its owner, or failing for 5 days).' }),
    ),
    failing_since: Nullable(DateTime('Since when every delivery has failed.')),
    created_at: DateTime(),
    updated_at: DateTime(),
    secret: Type.Optional(
      Type.String({
        description: '`whsec_` + base64 of 32 random bytes. Only in the answer that created or rotated it.',
      }),
    ),
  },
  { title: 'WebhookEndpoint', description: 'A webhook endpoint.' },
);

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookEndpoint) }, { title: 'WebhookList' });

export const WebhookDelivery = Type.Object(
  {
    id: Type.String(),
    endpoint_id: Type.String(),
    event_id: Type.String({ description: 'The `webhook-id` header of every attempt.' }),
    event_type: Type.String(),
    document_id: Nullable(
      Type.String({ description: 'The document a `document.*` event is about; null for other events.' }),
    ),
    source_id: Nullable(Type.String({ description: 'The source a `source.*` event is about; null for other events.' })),
    status: StringEnum(['pending', 'delivered', 'failed'] as const),
    attempts: Type.Integer(),
    next_attempt_at: Nullable(DateTime()),
    created_at: DateTime(),
    delivered_at: Nullable(DateTime()),
    attempt_log: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: DateTime(),
        status_code: Nullable(Type.Integer()),
        error: Nullable(Type.String()),
        duration_ms: Type.Integer(),
      }),
    ),
  },
  { title: 'WebhookDelivery', description: 'One event to deliver to the endpoint, with its attempts.' },
);

export const DeliveryList = Type.Object({ deliveries: Type.Array(WebhookDelivery) }, { title: 'WebhookDeliveryList' });
