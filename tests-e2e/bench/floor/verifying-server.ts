/**
 * The second of two bare hops with the internal credential (slots-floor.bench.ts): a node:http server
 * answering one static body, after checking the request's credential as availability does (libs/http
 * createCredentialVerifier, jose) under INTERNAL_AUTH_KEYS; 401 when it is refused. As the bare
 * server (services/availability/bench/static-server.ts) otherwise.
 * Usage: node --import tsx verifying-server.ts <body.json>; prints `LISTENING <port>`.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createCredentialVerifier, parseInternalKeyRing } from '@sched/http';

const body = readFileSync(process.argv[2]!);

async function main(): Promise<void> {
  const verifier = createCredentialVerifier({ service: 'availability', ring: await parseInternalKeyRing(process.env.INTERNAL_AUTH_KEYS ?? '') });
  const server = http.createServer((req, res) => {
    verifier.verify(req.headers.authorization).then(
      () => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
        res.end(body);
      },
      () => res.writeHead(401, { 'content-length': 0 }).end(),
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

void main();
