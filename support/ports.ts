import { createServer } from 'node:net';

/**
 * A loopback TCP port nothing listens on right now: one the system just handed out and that was
 * closed again. Free to bind a server to, and refused when connected to.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A loopback port that refuses connections, to reach an engine that is not there. */
export const closedPort = freePort;
