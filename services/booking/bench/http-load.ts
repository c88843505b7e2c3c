import { runClosedLoop as closedLoop, type LoadResult } from '@sched/testing';

export type { LoadResult };

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * Closed-loop load of JSON POSTs: libs/testing's runClosedLoop (the load generator the whole-system
 * benches use: `clients` workers on keep-alive connections for `durationS` seconds), each request a POST
 * of `next()`'s body with content-type application/json, so every request can book its own slot with its
 * own Idempotency-Key.
 */
export function runClosedLoop(opts: {
  url: string;
  clients: number;
  durationS: number;
  expectStatus: number;
  next(): { path: string; body: string; headers: Record<string, string> };
}): Promise<LoadResult> {
  return closedLoop({
    ...opts,
    next: () => {
      const { path, body, headers } = opts.next();
      return { method: 'POST', path, body, headers: { 'content-type': 'application/json', ...headers } };
    },
  });
}
