import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryList,
  DeliveryParams,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookIdParams,
  WebhookList,
} from '../schemas/webhooks.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** Webhook endpoints of the key's workspace and their deliveries (permission `write`). */
const webhooksRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const { webhooks } = services;
  const tags = ['webhooks'];

  app.post(
    '/webhooks',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint',
        description:
          'Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the returned `secret`, shown only in this answer.',
        body: CreateWebhookBody,
        response: { 201: WebhookEndpoint, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 422) },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(requestContext(request), request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/webhooks',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        response: { 200: WebhookList, ...problemResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => ({ webhooks: await webhooks.list(requestContext(request)) }),
  );

  app.get(
    '/webhooks/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        params: WebhookIdParams,
        response: { 200: WebhookEndpoint, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => webhooks.get(requestContext(request), request.params.id),
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Change, disable, enable a webhook endpoint or rotate its secret',
        params: WebhookIdParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookEndpoint, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 422) },
      },
    },
    async (request) => {
      const { rotate_secret, ...rest } = request.body;
      return webhooks.update(requestContext(request), request.params.id, {
        ...rest,
        ...(rotate_secret === undefined ? {} : { rotateSecret: rotate_secret }),
      });
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'deleteWebhook',
        summary: 'Remove a webhook endpoint',
        description: 'Its pending deliveries are given up.',
        params: WebhookIdParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      await webhooks.remove(requestContext(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'testWebhook',
        summary: 'Send a webhook.test event',
        description: 'Queued and delivered like any event; follow it in the deliveries.',
        params: WebhookIdParams,
        response: { 202: WebhookDelivery, ...problemResponses(...AUTHENTICATED_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const delivery = await webhooks.sendTest(requestContext(request), request.params.id);
      return reply.code(202).send(delivery);
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'Deliveries of a webhook endpoint, newest first, with their attempts',
        params: WebhookIdParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => ({
      deliveries: await webhooks.deliveries(requestContext(request), request.params.id, request.query.limit ?? 50),
    }),
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Attempt a delivery again now',
        params: DeliveryParams,
        response: { 202: WebhookDelivery, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      const delivery = await webhooks.retry(requestContext(request), request.params.id, request.params.delivery_id);
      return reply.code(202).send(delivery);
    },
  );
};

export default webhooksRoutes;
