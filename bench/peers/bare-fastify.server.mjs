/**
 * The API overhead row's ceiling: a bare Fastify server (no plugins, no logging) in a process of
 * its own with one route answering a small JSON object through a response schema. Prints its port.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get(
  '/hello',
  {
    schema: {
      response: { 200: { type: 'object', properties: { hello: { type: 'string' } }, required: ['hello'] } },
    },
  },
  async () => ({ hello: 'world' }),
);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(typeof address === 'object' && address ? address.port : 0);
