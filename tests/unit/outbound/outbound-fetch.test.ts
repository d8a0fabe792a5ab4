/**
 * Requests the service makes of its own accord reach only public addresses unless the operator
 * allows private ones, follow redirects only as asked, and are bounded in bytes and time.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { outboundFetch } from '../../../core/outbound/outbound-fetch.ts';
import { checkOutboundTarget, isNonPublicAddress } from '../../../core/outbound/outbound-policy.ts';
import { LOOPBACK_FORMS, literalOrigin, loopbackFormsResolver } from '../../support/loopback-forms.ts';

const open = { allowPrivate: true };
const closed = { allowPrivate: false };

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    return error instanceof KbError ? error.code : String(error);
  }
}

/** Requests the test server has answered, by path. */
const served: string[] = [];

let server: http.Server;
let other: http.Server;
let base = '';
let otherBase = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    served.push(url);
    if (url === '/hello') res.end('hello');
    else if (url === '/big') res.end('x'.repeat(5000));
    else if (url === '/big-chunked') {
      res.write('x'.repeat(3000));
      res.end('x'.repeat(3000));
    } else if (url === '/slow') setTimeout(() => res.end('late'), 2000);
    else if (url === '/to-hello') res.writeHead(302, { location: '/hello' }).end();
    else if (url === '/to-other') res.writeHead(302, { location: `${otherBase}/hello` }).end();
    else if (url === '/loop') res.writeHead(302, { location: '/loop' }).end();
    else if (url === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (url === '/to-credentials')
      res.writeHead(302, { location: `${otherBase.replace('//', '//user:pw@')}/` }).end();
    else if (url === '/post') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => res.writeHead(500).end(`${req.method} ${body}`));
    } else res.writeHead(404).end();
  });
  other = http.createServer((_req, res) => res.end('other'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  other.closeAllConnections();
  await new Promise((r) => server.close(r));
  await new Promise((r) => other.close(r));
});

describe('which addresses are non-public', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
    'not-an-ip',
  ])('%s is refused', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (ip) =>
    expect(isNonPublicAddress(ip)).toBe(false),
  );
});

describe('checking a target when it is configured', () => {
  it('refuses loopback, private and link-local targets unless allowed', async () => {
    expect(await code(checkOutboundTarget('http://127.0.0.1:9/x', closed))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('http://localhost/x', closed))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('http://169.254.169.254/latest/meta-data', closed))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('http://[::1]:80/', closed))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('http://localhost/x', open))).toBe('no error');
  });

  it.each(LOOPBACK_FORMS.map((f) => [f.form, f]))(
    'refuses the %s form of loopback, as a URL literal and as what a name resolves to',
    async (_form, form) => {
      const resolve = loopbackFormsResolver();
      const literal = await checkOutboundTarget(`${literalOrigin(form, 80)}/x`, closed).catch((e: KbError) => e);
      expect(literal).toMatchObject({ code: 'outbound-refused' });
      expect((literal as KbError).message).toMatch(/is not a public address .*KB_OUTBOUND_ALLOW_PRIVATE/);
      const named = await checkOutboundTarget(`http://${form.name}/x`, { ...closed, resolve }).catch((e: KbError) => e);
      expect(named).toMatchObject({ code: 'outbound-refused' });
      expect((named as KbError).message).toContain(`${form.name} resolves to ${form.address}`);
      expect(await code(checkOutboundTarget(`http://${form.name}/x`, { ...open, resolve }))).toBe('no error');
    },
  );

  it('refuses other schemes and URLs with credentials, even when private targets are allowed', async () => {
    expect(await code(checkOutboundTarget('file:///etc/passwd', open))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('ftp://example.org/', open))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('http://user:pw@example.org/', open))).toBe('outbound-refused');
    expect(await code(checkOutboundTarget('not a url', open))).toBe('outbound-refused');
  });
});

describe('outbound requests', () => {
  it('refuses a loopback server by name and by address unless private targets are allowed', async () => {
    const port = new URL(base).port;
    for (const url of [`${base}/hello`, `http://localhost:${port}/hello`, `http://[::ffff:127.0.0.1]:${port}/hello`]) {
      expect(await code(outboundFetch({ url, timeoutMs: 2000, maxBytes: 100 }, closed))).toBe('outbound-refused');
    }
    const ok = await outboundFetch({ url: `http://localhost:${port}/hello`, timeoutMs: 2000, maxBytes: 100 }, open);
    expect(ok.status).toBe(200);
    expect(ok.body.toString()).toBe('hello');
  });

  it('refuses every IPv6 form of loopback when connecting, as a URL literal and as what a name resolves to', async () => {
    const port = new URL(base).port;
    const resolve = loopbackFormsResolver(new Map([['loopback.example.test', '127.0.0.1']]));
    served.length = 0;
    for (const form of LOOPBACK_FORMS) {
      for (const url of [`${literalOrigin(form, port)}/hello`, `http://${form.name}:${port}/hello`]) {
        const answer = outboundFetch({ url, timeoutMs: 2000, maxBytes: 100 }, { ...closed, resolve });
        expect(await code(answer), url).toBe('outbound-refused');
      }
    }
    expect(served).toEqual([]);
    // The same resolver is what connections use: with private targets allowed, the name reaches the server.
    const ok = await outboundFetch(
      { url: `http://loopback.example.test:${port}/hello`, timeoutMs: 2000, maxBytes: 100 },
      { ...open, resolve },
    );
    expect(ok.body.toString()).toBe('hello');
  });

  it('follows redirects, stops at the bound, and keeps to the host when asked', async () => {
    const followed = await outboundFetch({ url: `${base}/to-hello`, timeoutMs: 2000, maxBytes: 100 }, open);
    expect(followed.body.toString()).toBe('hello');
    expect(followed.url).toBe(`${base}/hello`);
    expect(await code(outboundFetch({ url: `${base}/loop`, timeoutMs: 2000, maxBytes: 100 }, open))).toBe(
      'outbound-failed',
    );
    const sameHost = { url: `${base}/to-other`, timeoutMs: 2000, maxBytes: 100, redirects: 'same-host' as const };
    expect(await code(outboundFetch(sameHost, open))).toBe('outbound-refused');
    const none = await outboundFetch({ ...sameHost, redirects: 'none' }, open);
    expect(none.status).toBe(302);
    expect(none.headers.location).toBe(`${otherBase}/hello`);
  });

  it('checks every redirect hop again: another scheme or credentials are refused even when private targets are allowed', async () => {
    for (const path of ['/to-file', '/to-credentials']) {
      expect(await code(outboundFetch({ url: `${base}${path}`, timeoutMs: 2000, maxBytes: 100 }, open))).toBe(
        'outbound-refused',
      );
    }
  });

  it('cuts a body above the bound, declared or streamed', async () => {
    for (const path of ['/big', '/big-chunked']) {
      expect(await code(outboundFetch({ url: `${base}${path}`, timeoutMs: 2000, maxBytes: 1000 }, open))).toBe(
        'outbound-too-large',
      );
    }
  });

  it('gives up after the time bound', async () => {
    expect(await code(outboundFetch({ url: `${base}/slow`, timeoutMs: 200, maxBytes: 100 }, open))).toBe('timeout');
  });

  it('returns an error status as a response, with the body it sent', async () => {
    const answer = await outboundFetch(
      { url: `${base}/post`, method: 'POST', body: '{"a":1}', timeoutMs: 2000, maxBytes: 100 },
      open,
    );
    expect(answer.status).toBe(500);
    expect(answer.body.toString()).toBe('POST {"a":1}');
  });

  it('fails clearly when nothing listens', async () => {
    expect(await code(outboundFetch({ url: 'http://127.0.0.1:1/', timeoutMs: 2000, maxBytes: 100 }, open))).toBe(
      'outbound-failed',
    );
  });
});
