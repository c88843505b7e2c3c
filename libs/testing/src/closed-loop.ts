/**
 * The benches' load generator: one request through an undici dispatcher (`send`) and the closed loop
 * built on it (`runClosedLoop`), shared by the whole-system benches (tests-e2e/bench/harness.ts) and the
 * service benches (services/booking/bench/http-load.ts).
 *
 * The load generator is not part of the system under test, but it runs on the same cores: it sends
 * through undici's Pool.dispatch on keep-alive connections (llhttp, one handler object per request, no
 * stream per response), which costs the machine far less per request than node:http's agent or fetch.
 */
import { Pool, type Dispatcher } from 'undici';

export interface Answer {
  status: number;
  /** The body as text; '' unless asked for (`readBody`). */
  body: string;
}

/**
 * One request through `dispatcher`; resolves with the status (and the body when `readBody`), rejects on a
 * transport error. The body of an answer not read is still received in full, and dropped.
 */
export function send(dispatcher: Dispatcher, req: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string | Buffer }, readBody: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const chunks: Buffer[] = [];
    dispatcher.dispatch(req, {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (readBody) chunks.push(chunk);
      },
      onResponseEnd() {
        resolve({ status, body: readBody ? Buffer.concat(chunks).toString() : '' });
      },
      onResponseError(_controller, err) {
        reject(err);
      },
    });
  });
}

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

/** One request of a closed loop: GET without a body, POST with one, unless `method` says otherwise. */
export interface LoadRequest {
  method?: 'GET' | 'POST';
  path: string;
  body?: string | Buffer;
  headers: Record<string, string>;
}

/**
 * Closed-loop load: `clients` workers, each sending its next request as soon as the previous answered,
 * over keep-alive connections (one per worker, an undici Pool), for `durationS` seconds. `next()` gives
 * each request (built ahead of time by the caller where it can be), so every request can book its own
 * slot with its own Idempotency-Key; its headers are sent as given (content-length is added). Answer
 * bodies are not read.
 */
export async function runClosedLoop(opts: { url: string; clients: number; durationS: number; expectStatus: number; next(): LoadRequest }): Promise<LoadResult> {
  const pool = new Pool(new URL(opts.url).origin, { connections: opts.clients });
  const result: LoadResult = { durationS: opts.durationS, ok: 0, otherStatuses: {}, errors: 0, latenciesMs: [] };
  const deadline = Date.now() + opts.durationS * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const { method, path, body, headers } = opts.next();
      const started = process.hrtime.bigint();
      try {
        const { status } = await send(pool, { method: method ?? (body === undefined ? 'GET' : 'POST'), path, headers, body }, false);
        if (status === opts.expectStatus) {
          result.ok += 1;
          result.latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
        } else {
          result.otherStatuses[status] = (result.otherStatuses[status] ?? 0) + 1;
        }
      } catch {
        result.errors += 1;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.clients }, worker));
  } finally {
    await pool.close();
  }
  result.latenciesMs.sort((a, b) => a - b);
  return result;
}
