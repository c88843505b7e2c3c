import { TEST_INTERNAL_AUTH_KEYS, credentialFor } from '@sched/testing';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { checkContract } from '@sched/openapi';
import { runService, type RunningService } from '@sched/runtime';
import type { TestDatabase } from '@sched/testing';
import { setupGateway } from '../../src/app';
import { opsPortOf, readConfig, type GatewayConfig } from '../../src/config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server standing in for a service: records what it receives, answers an envelope. */
export async function startStubUpstream(): Promise<{ url: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const delay = req.url?.includes('slow') ? 1500 : 0;
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.setHeader('idempotent-replayed', 'true');
        res.setHeader('x-internal-secret-header', 'should-not-pass');
        res.statusCode = req.method === 'POST' ? 201 : 200;
        res.end(JSON.stringify({ data: { upstream: 'stub', path: req.url }, meta: { request_id: req.headers['x-request-id'] } }));
      }, delay);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Gateways whose services are the fake upstream above: what they forward is not a real resource. */
const stubbedGateways = new Set<string>();
/** Services that tests call directly (base URL → service name): call() signs the credential the real caller would. */
const directServices = new Map<string, string>();
export function callsDirectly(baseUrl: string, service: string): void {
  directServices.set(baseUrl, service);
}
/** Paths the gateway answers itself (workspaces and keys); everything else is forwarded. */
const GATEWAY_OWNED = /^\/admin\/v1\/workspaces(\/[^/]+(\/api-keys(\/[^/]+\/revoke)?)?)?(\?|$)/;

export interface RunningGateway {
  url: string;
  /** The operations port (/healthz, /readyz, /metrics). */
  opsUrl: string;
  service: RunningService<GatewayConfig, undefined>;
  logs: string[];
  close(): Promise<void>;
}

/** One gateway replica on the test database, as main.ts runs it, listening on free ports (public and operations). */
export async function startGateway(
  db: TestDatabase,
  upstreamUrl: string,
  env: Record<string, string> = {},
  opts: { stubbedUpstream?: boolean } = {},
): Promise<RunningGateway> {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    ADMIN_TOKEN,
    DATABASE_URL: db.urlFor('gateway'),
    BOOKING_URL: upstreamUrl,
    AVAILABILITY_URL: upstreamUrl,
    INVITATION_URL: upstreamUrl,
    CALENDAR_SYNC_URL: 'http://127.0.0.1:1',
    WEBHOOK_DISPATCH_URL: upstreamUrl,
    UPSTREAM_TIMEOUT_MS: '500',
    PORT: '0',
    ...env,
  });
  const service = await runService({
    name: 'gateway',
    config,
    broker: false,
    access: 'public',
    opsPort: opsPortOf,
    handleSignals: false,
    logger: createLogger({ service: 'gateway', stream, level: 'debug' }),
    setup: (ctx) => setupGateway(ctx),
  });
  const { port } = service.server.address() as AddressInfo;
  if (opts.stubbedUpstream) stubbedGateways.add(`http://127.0.0.1:${port}`);
  return {
    url: `http://127.0.0.1:${port}`,
    opsUrl: `http://127.0.0.1:${(service.opsServer!.address() as AddressInfo).port}`,
    service,
    logs,
    close: () => service.stop('test done'),
  };
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const audience = directServices.get(base);
  if (audience && headers.authorization === undefined) Object.assign(headers, await credentialFor(audience, path, { workspaceId: headers['x-workspace-id'] }));
  let body: string | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  // Every answer through the gateway is checked against the OpenAPI document (the contract test),
  // except a fake upstream's successes, which stand in for resources without being them.
  const throughGateway = res.headers.has('ratelimit-limit') || opts.token === ADMIN_TOKEN || res.status === 401;
  const fakeSuccess = stubbedGateways.has(base) && res.status < 300 && !GATEWAY_OWNED.test(path);
  if (throughGateway && !fakeSuccess) {
    checkContract({ method, path, status: res.status, headers: Object.fromEntries(res.headers), body: parsed });
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
