import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from '@sched/logger';
import { answerClientErrors } from './client-error';
import { expressMessageClasses } from './express-messages';
import type { FastStep } from './fast-path';

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
const IDLE_SWEEP_MS = 50;

/** An HTTP server that drains on close: stop accepting, finish in-flight requests, then force after a bound. */
export class GracefulServer {
  private server?: http.Server;
  private closing?: Promise<void>;

  constructor(
    private readonly app: Express,
    private readonly logger: Logger,
    private readonly defaultTimeoutMs: number,
    /** The request listener, made when listening starts; the app itself by default. */
    private readonly listener: () => RequestListener = () => app,
  ) {}

  get stopping(): boolean {
    return this.closing !== undefined;
  }

  /** Tells keep-alive clients to reconnect (to another replica) once stopping has begun. */
  readonly connectionCloseWhileStopping: FastStep = (_req, res, next) => {
    if (this.stopping) res.setHeader('Connection', 'close');
    next();
  };

  listen(port: number, host: string): Promise<http.Server> {
    // Requests and responses are born express's (express-messages.ts): app.handle need not reshape them.
    const server = http.createServer(expressMessageClasses(this.app), this.listener());
    // Callers (the gateway, other services) keep connections alive. A server that closes an idle one
    // while a caller reuses it causes a reset; keep idle connections longer than any caller's pool
    // does (internal clients drop theirs after 30 s), as load balancers expect too.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    // What the parser refuses (headers over 16 KiB: 431) is answered with the error envelope too.
    answerClientErrors(server, this.logger);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        this.server = server;
        const { port: bound } = server.address() as AddressInfo;
        this.logger.info('http listening', { host, port: bound });
        resolve(server);
      });
    });
  }

  /** Idempotent: a second SIGTERM or a second closer awaits the same drain. */
  close(timeoutMs = this.defaultTimeoutMs): Promise<void> {
    this.closing ??= this.drain(timeoutMs);
    return this.closing;
  }

  private drain(timeoutMs: number): Promise<void> {
    const server = this.server;
    if (!server?.listening) return Promise.resolve();
    return new Promise((resolve) => {
      // Connections finishing a request become idle after server.close(); sweep them so close completes.
      const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      const force = setTimeout(() => {
        this.logger.warn('http drain timed out; closing open connections', { timeout_ms: timeoutMs });
        server.closeAllConnections();
      }, timeoutMs);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(force);
        this.logger.info('http server closed');
        resolve();
      });
      server.closeIdleConnections();
    });
  }
}
