import http from 'node:http';
import { readFileSync } from 'node:fs';

/**
 * A bare Node HTTP server answering one static JSON body to every request: the benchmark's
 * calendar-sync stand-in (500 busy intervals) and its physical-limit baseline. Usage:
 * node --import tsx static-server.ts <body.json>; prints `LISTENING <port>`.
 */
const body = readFileSync(process.argv[2]!);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
