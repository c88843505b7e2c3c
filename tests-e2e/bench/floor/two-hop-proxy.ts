/**
 * The first of two bare hops (slots-floor.bench.ts): a node:http server that forwards each request to
 * one upstream with undici, the gateway's client (libs/http forward-client.ts: a keep-alive Pool per
 * upstream, connections unbounded, idle sockets closed after 30 s, the dispatch API), and streams the
 * answer back as it arrives. Nothing else: no routing, no API key, no rate limit, no logging.
 * Usage: node --import tsx two-hop-proxy.ts <upstream origin> [--sign]; prints `LISTENING <port>`.
 * --sign: each request carries a fresh internal credential for `availability` (or the service named by
 * --audience=<service>), signed as the gateway signs it (libs/http createCredentialSigner, jose) under
 * INTERNAL_AUTH_KEYS, on behalf of an API key.
 * A request with a body (the create floor's POSTs, create-floor.bench.ts) is read whole first, as the
 * gateway reads a JSON body, and forwarded with its method, content-type and Idempotency-Key; a GET goes
 * out as before (slots-floor).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import { createCredentialSigner, parseInternalKeyRing, type CredentialSigner } from '@sched/http';

const upstream = process.argv[2]!;
const sign = process.argv.includes('--sign');
const audience = process.argv.find((a) => a.startsWith('--audience='))?.slice('--audience='.length) ?? 'availability';
/** As IDLE_SOCKET_MS of libs/http forward-client.ts. */
const IDLE_SOCKET_MS = 30_000;
const pool = new Pool(upstream, { keepAliveTimeout: IDLE_SOCKET_MS, keepAliveMaxTimeout: IDLE_SOCKET_MS });
/** On whose behalf, as the gateway's API-key authentication sets it. */
const who = { principal: 'api_key' as const, workspaceId: 'wsp_0123456789abcdefghij', apiKeyId: 'key_0123456789abcdefghij', scopes: ['slots:read', 'bookings:read', 'bookings:write'] };

async function main(): Promise<void> {
  const signer: CredentialSigner | undefined = sign ? createCredentialSigner({ service: 'gateway', ring: await parseInternalKeyRing(process.env.INTERNAL_AUTH_KEYS ?? '') }) : undefined;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      void forward(req, res, signer);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void forward(req, res, signer, Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => {
    void pool.close();
    server.close(() => process.exit(0));
  });
}

async function forward(req: http.IncomingMessage, res: http.ServerResponse, signer: CredentialSigner | undefined, body?: Buffer): Promise<void> {
  const headers: Record<string, string> = { 'user-agent': 'sched-internal' };
  if (body) {
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string') headers['idempotency-key'] = key;
  }
  if (signer) {
    const requestId = `req_${randomUUID()}`;
    headers['x-request-id'] = requestId;
    headers.authorization = `Bearer ${await signer.sign(audience, { ...who, requestId })}`;
  }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: () => undefined,
    onResponseStart: (c, statusCode, h) => {
      const out: Record<string, string> = {};
      if (h['content-type'] !== undefined) out['content-type'] = String(h['content-type']);
      if (h['content-length'] !== undefined) out['content-length'] = String(h['content-length']);
      res.writeHead(statusCode, out);
      res.on('drain', () => c.resume());
    },
    onResponseData: (c, chunk) => {
      if (!res.write(chunk)) c.pause();
    },
    onResponseEnd: () => res.end(),
    onResponseError: () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    },
  };
  if (body) pool.dispatch({ method: (req.method ?? 'POST') as Dispatcher.HttpMethod, path: req.url ?? '/', headers, body }, handler);
  else pool.dispatch({ method: 'GET', path: req.url ?? '/', headers }, handler);
}

void main();
