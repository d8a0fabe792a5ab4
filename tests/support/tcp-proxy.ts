/**
 * A TCP proxy on a loopback port in front of a real engine, which a test cuts and restores to
 * simulate an outage of that engine for the processes that reach it through the proxy (and for
 * them only: the engine itself, shared with other tests, keeps running).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../../support/ports.ts';

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** Whether connections go through now. */
  readonly up: boolean;
  /** Drops every open connection (reset) and refuses new ones until {@link TcpProxy.restore}. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  async function listen(): Promise<void> {
    const next = createServer((client) => {
      track(client);
      const upstream = createConnection(target);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
  }

  async function stop(): Promise<void> {
    const current = server;
    server = null;
    for (const socket of sockets) socket.resetAndDestroy();
    sockets.clear();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  }

  await listen();
  return {
    port,
    get up() {
      return server !== null;
    },
    cut: stop,
    async restore() {
      if (!server) await listen();
    },
    close: stop,
  };
}
