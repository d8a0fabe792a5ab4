import { describe, expect, it } from 'vitest';
import { RETRY_MULTIPLIERS, retryDelayMs } from '../../../core/webhooks/retry-schedule.ts';
import { deliveriesFor, deliveryId, subscribesTo } from '../../../core/webhooks/webhook-deliveries.ts';

describe('webhook retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h with the default base, then gives up', () => {
    const middle = () => 0.5; // no jitter
    const delays = RETRY_MULTIPLIERS.map((_, i) => retryDelayMs(i + 1, 5_000, middle));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const total = (delays as number[]).reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(24);
    expect(total / 3_600_000).toBeLessThan(30);
    expect(retryDelayMs(RETRY_MULTIPLIERS.length + 1, 5_000, middle)).toBeNull();
  });

  it('spreads each delay by ±20 %', () => {
    expect(retryDelayMs(2, 1_000, () => 0)).toBe(48_000);
    expect(retryDelayMs(2, 1_000, () => 1)).toBe(72_000);
  });
});

describe('fan-out of a notification', () => {
  const base = {
    workspaceId: 'ws-a',
    url: 'https://hooks.example.com/',
    description: null,
    secret: 'whsec_x',
    enabled: true,
    disabledReason: null,
    failingSinceMs: null,
    createdAtMs: 1_000,
    updatedAtMs: 1_000,
  };
  const event = {
    id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    workspaceId: 'ws-a',
    subject: 'doc-1',
    payload: { type: 'document.deleted', timestamp: '2026-01-01T00:00:00.000Z', data: {} },
  };

  it('goes to the enabled endpoints of the workspace that subscribed and existed when it was appended', () => {
    const endpoints = [
      { ...base, id: 'all', events: ['*'] },
      { ...base, id: 'deleted', events: ['document.deleted'] },
      { ...base, id: 'completed', events: ['document.version.completed'] },
      { ...base, id: 'off', events: ['*'], enabled: false },
      { ...base, id: 'later', events: ['*'], createdAtMs: 5_000 },
      { ...base, id: 'elsewhere', events: ['*'], workspaceId: 'ws-b' },
    ];
    const deliveries = deliveriesFor(event, endpoints, 2_000);
    expect(deliveries.map((d) => d.endpointId)).toEqual(['all', 'deleted']);
    expect(deliveries.every((d) => d.eventId === event.id && d.status === 'pending')).toBe(true);
    expect(deliveries[0]?.id).toBe(deliveryId('all', event.id));
    expect(deliveryId('all', event.id)).not.toBe(deliveryId('deleted', event.id));
    expect(subscribesTo({ events: ['*'] }, 'source.sync.completed')).toBe(true);
  });
});
