/**
 * CPU of one log line in libs/logger (issue 18, docs/performance.md "What is left"): the process's own
 * CPU time (process.cpuUsage, user + system) over BENCH_LINES lines written to a stream that drops them,
 * divided by the lines. CPU time, not wall-clock: it does not depend much on what else runs on the
 * machine. Alternate runs when comparing (A B A B): the figures of one run move by a few per cent.
 *
 *   node --import tsx libs/logger/bench/line.bench.ts
 *   BENCH_LINES=50000 BENCH_ROUNDS=5 node --import tsx libs/logger/bench/line.bench.ts
 *   BENCH_LOGGER=/abs/path/to/another/src/index.ts node --import tsx libs/logger/bench/line.bench.ts   (A/B)
 *
 * Cases, each inside the context of a request as libs/http sets it (request_id, workspace_id and the
 * request context under a symbol) or of a message (event_id, workspace_id):
 *   delivered  webhook-dispatch's "webhook delivered": message + 7 fields (ids, numbers, an undefined)
 *   request    libs/http's per-request line at level http: message + 5 fields
 *   error      an error-level line with an Error (stack, code, cause) as a field
 *   filtered   a debug line at level info (dropped)
 *   none       the same turns of the event loop without a line (subtracted: net_cpu_us_per_line)
 * BENCH_BURST lines (10) are written per turn of the event loop, as a handler writes a few and yields;
 * BENCH_BURST=50000 writes a whole round in one turn (the tight loop).
 * BENCH_SINK=stdout writes the lines to the process's stdout instead (a pipe or a file: what a write
 * system call per line costs), the figures to stderr.
 * Also counts the writes the destination stream gets per line and the bytes per line. Prints one JSON
 * object per case; the minimum of the rounds is the figure (the least disturbed round).
 */
import { Writable } from 'node:stream';

type LoggerModule = typeof import('../src');

const LINES = Number(process.env.BENCH_LINES ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',') : undefined;
/** Lines per turn of the event loop: a service writes a few lines per request or message, then yields. */
const BURST = Number(process.env.BENCH_BURST ?? 10);

interface Sink {
  stream: Writable;
  writes: number;
  bytes: number;
}

/** BENCH_SINK=stdout: the lines go to fd 1 as a service's do (run with `> file`, `> /dev/null` or `| cat > /dev/null`), the figures to stderr. */
const TO_STDOUT = process.env.BENCH_SINK === 'stdout';
const report = (text: string) => (TO_STDOUT ? process.stderr : process.stdout).write(text);

function sink(): Sink {
  // The real stdout: its writes are not counted (writes_per_line and bytes_per_line print as 0).
  if (TO_STDOUT) return { writes: 0, bytes: 0, stream: process.stdout as unknown as Writable };
  const s: Sink = {
    writes: 0,
    bytes: 0,
    stream: new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        s.writes += 1;
        s.bytes += chunk.length;
        cb();
      },
    }),
  };
  return s;
}

const REQUEST = Symbol('bench.requestContext');

async function main(): Promise<void> {
  const mod = (await import(process.env.BENCH_LOGGER || '../src')) as LoggerModule;
  const { createLogger, runWithContext } = mod;
  const requestStore = { request_id: 'req_3q2Xb9cK1vGmT0aZr8yLpw', workspace_id: 'wsp_01JD5Y7Q8H2M4N6P', [REQUEST]: { requestId: 'req_3q2Xb9cK1vGmT0aZr8yLpw', principal: 'api_key' } };
  const messageStore = { event_id: 'evt_01JD5Y7Q8H2M4N6PQRSTVWXYZ0', workspace_id: 'wsp_01JD5Y7Q8H2M4N6P' };
  const driver = Object.assign(new Error('duplicate key value violates unique constraint "bookings_pkey"'), { code: '23505' });
  const failure = new Error('Failed query: insert into "bookings" …', { cause: driver });

  const cases: Record<string, { level: string; store: object; line: (log: ReturnType<typeof createLogger>, i: number) => void }> = {
    // The same turns with no line: what the loop itself costs, run first, subtracted from the other cases' figures.
    none: { level: 'info', store: messageStore, line: () => undefined },
    delivered: {
      level: 'info',
      store: messageStore,
      line: (log, i) =>
        log.info('webhook delivered', {
          delivery_id: 'dlv_01JD5Y7Q8H2M4N6PQRSTVWXYZ1',
          endpoint_id: 'wep_01JD5Y7Q8H2M4N6PQRSTVW',
          event_type: 'booking.created',
          attempt: 1,
          status_code: 200,
          latency_ms: 3 + (i % 7),
          error_kind: undefined,
        }),
    },
    request: {
      level: 'http',
      store: requestStore,
      line: (log, i) => log.http('request', { request_id: 'req_3q2Xb9cK1vGmT0aZr8yLpw', method: 'POST', route: '/v1/bookings', status: 201, duration_ms: 4.2 + (i % 3) }),
    },
    error: {
      level: 'info',
      store: requestStore,
      line: (log) => log.error('unhandled error', { err: failure, method: 'POST', route: '/v1/bookings' }),
    },
    filtered: {
      level: 'info',
      store: messageStore,
      line: (log, i) => log.debug('event handled', { queue: 'booking.events', type: 'booking.created', attempt: i }),
    },
  };

  let loopCost = 0;
  for (const [name, c] of Object.entries(cases)) {
    if (ONLY && !ONLY.includes(name) && name !== 'none') continue;
    const out = sink();
    const log = createLogger({ service: 'webhook-dispatch', level: c.level, stream: out.stream });
    const perRound: number[] = [];
    // BURST lines per turn, each turn inside one unit of work (as a request or a message handler writes
    // its lines), then the next turn after setImmediate: whatever a line leaves for later (a setImmediate
    // of its own, queued writes) runs within the round and belongs to its cost.
    const turn = (from: number) =>
      runWithContext(c.store, () => {
        for (let i = from; i < from + BURST; i++) c.line(log, i);
      });
    const round = async (n: number) => {
      for (let i = 0; i < n; i += BURST) {
        turn(i);
        await new Promise((res) => setImmediate(res));
      }
      await new Promise((res) => setImmediate(res));
    };
    await round(Math.min(LINES, 5_000)); // warm-up: the JIT, the stream's buffers
    const writes0 = out.writes;
    const bytes0 = out.bytes;
    for (let r = 0; r < ROUNDS; r++) {
      const before = process.cpuUsage();
      await round(LINES);
      const used = process.cpuUsage(before);
      perRound.push((used.user + used.system) / LINES);
    }
    if (name === 'none') loopCost = Math.min(...perRound);
    const lines = LINES * ROUNDS;
    report(
      `${JSON.stringify({
        case: name,
        lines_per_round: LINES,
        burst: BURST,
        cpu_us_per_line_min: Number(Math.min(...perRound).toFixed(2)),
        // Without the loop's own cost (the `none` case): the line's.
        net_cpu_us_per_line: name === 'none' ? 0 : Number((Math.min(...perRound) - loopCost).toFixed(2)),
        cpu_us_per_line_rounds: perRound.map((v) => Number(v.toFixed(2))),
        writes_per_line: (out.writes - writes0) / lines,
        bytes_per_line: Math.round((out.bytes - bytes0) / lines),
      })}\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
