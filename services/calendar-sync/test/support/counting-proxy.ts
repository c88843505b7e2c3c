import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain HTTP proxy in front of Radicale that counts requests by method (PROPFIND, REPORT, PUT, …),
 * to show how many requests a refresh costs.
 */
export async function startCountingProxy(targetPort: number): Promise<{
  url: string;
  counts: Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}> {
  const counts: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    counts[req.method!] = (counts[req.method!] ?? 0) + 1;
    const upstream = http.request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}` } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      // Radicale down behind the proxy: answer like an unreachable server would look to a client.
      res.socket?.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    reset: () => Object.keys(counts).forEach((k) => delete counts[k]),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
