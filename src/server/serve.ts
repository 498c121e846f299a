/**
 * Listens: puts a Hono app on a Node HTTP server (@hono/node-server) and hands back its address
 * and a graceful `close()`. The only module of the server that opens a socket.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

/** Options of `listen`. */
export interface ListenOptions {
  /** TCP port; 0 picks a free one (default 8787). */
  port?: number;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /** Idle keep-alive connections are closed after this many ms (default 65 000, above common proxy timeouts). */
  keepAliveTimeoutMs?: number;
}

/** A listening server. */
export interface ListeningServer {
  /** e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  host: string;
  /** Stops accepting connections, lets in-flight requests finish for up to `graceMs` (default 5 000), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Default port of `ctxvm serve`. */
export const DEFAULT_PORT = 8787;

/** Starts listening; resolves once the socket is bound (rejects on EADDRINUSE and friends). */
export function listen(app: Pick<Hono, 'fetch'>, options: ListenOptions = {}): Promise<ListeningServer> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? DEFAULT_PORT, hostname: host }, (info: AddressInfo) => {
      server.off('error', reject);
      const http = server as Server;
      http.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
      const shownHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        port: info.port,
        host: info.address,
        close: (graceMs = 5_000) =>
          new Promise<void>((done) => {
            const timer = setTimeout(() => http.closeAllConnections(), graceMs);
            timer.unref();
            http.close(() => {
              clearTimeout(timer);
              done();
            });
            http.closeIdleConnections();
          }),
      });
    });
    server.once('error', reject);
  });
}
