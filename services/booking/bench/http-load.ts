import http from 'node:http';

export interface LoadResult {
  durationS: number;
  /** Requests answered with the expected status. */
  ok: number;
  /** Answered with another status, by status. */
  otherStatuses: Record<string, number>;
  /** Transport errors (no answer). */
  errors: number;
  /** Latencies in ms of the ok requests, sorted. */
  latenciesMs: number[];
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * Closed-loop load: `clients` workers, each sending its next request as soon as the previous answered,
 * over keep-alive connections (one socket per worker), for `durationS` seconds. The request body and
 * headers come from `next()` so every request can book its own slot with its own Idempotency-Key.
 */
export async function runClosedLoop(opts: {
  url: string;
  clients: number;
  durationS: number;
  expectStatus: number;
  next(): { path: string; body: string; headers: Record<string, string> };
}): Promise<LoadResult> {
  const target = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.clients });
  const result: LoadResult = { durationS: opts.durationS, ok: 0, otherStatuses: {}, errors: 0, latenciesMs: [] };
  const deadline = Date.now() + opts.durationS * 1000;

  const once = () =>
    new Promise<void>((resolve) => {
      const { path, body, headers } = opts.next();
      const started = process.hrtime.bigint();
      const req = http.request(
        { host: target.hostname, port: target.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
        (res) => {
          res.resume();
          res.on('end', () => {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            if (res.statusCode === opts.expectStatus) {
              result.ok += 1;
              result.latenciesMs.push(ms);
            } else {
              const k = String(res.statusCode);
              result.otherStatuses[k] = (result.otherStatuses[k] ?? 0) + 1;
            }
            resolve();
          });
        },
      );
      req.on('error', () => {
        result.errors += 1;
        resolve();
      });
      req.end(body);
    });

  const worker = async () => {
    while (Date.now() < deadline) await once();
  };
  await Promise.all(Array.from({ length: opts.clients }, worker));
  agent.destroy();
  result.latenciesMs.sort((a, b) => a - b);
  return result;
}
