// Preloaded into the calendar-sync process by write.bench.ts (`--import` after tsx): counts what the
// process does, and answers the counts over the IPC channel when asked ({ probe: 'counts' }).
// - Postgres: every query the pg client sends (round trips), the statements in it, by kind (the verb and
//   its object, EXECUTE by statement name), BEGINs and COMMITs.
// - HTTP: requests the process starts (node:http, by method and port) and TCP connections it opens.
// - CPU: process.cpuUsage() of the whole process, and per thread kind from /proc/self/task (the main
//   thread, V8's GC and compiler helpers, libuv's pool…), so work off the main thread is seen too.
// A measuring tool only: nothing of it is in the service.
import { subscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import pg from 'pg';
// The module alone, not @sched/testing's index: this runs inside the measured service process.
import { statementsIn } from '@sched/testing/src/sql-statements';

interface Counts {
  roundTrips: number;
  statements: number;
  begins: number;
  commits: number;
  byKind: Record<string, number>;
  httpRequests: Record<string, number>;
  tcpConnects: number;
  cpuUs: number;
  sysUs: number;
  /** CPU µs by thread name (the main thread is the process's own name, `node` or `MainThread`). */
  threadsUs: Record<string, number>;
}

const counts: Counts = { roundTrips: 0, statements: 0, begins: 0, commits: 0, byKind: {}, httpRequests: {}, tcpConnects: 0, cpuUs: 0, sysUs: 0, threadsUs: {} };

const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const name = typeof first === 'object' && first !== null && 'name' in first ? (first as { name?: string }).name : undefined;
  const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '');
  const stmts = name ? [`EXECUTE ${name}`] : text.includes(';') ? statementsIn(text) : [text];
  counts.roundTrips += 1;
  counts.statements += stmts.length;
  for (const s of stmts) {
    const words = s.replace(/"/g, '').split(/[\s(]+/, 3);
    const kind = (/^(execute|prepare)$/i.test(words[0] ?? '') ? words.slice(0, 2) : words).join(' ').toLowerCase();
    if (kind.startsWith('begin')) counts.begins += 1;
    if (kind.startsWith('commit')) counts.commits += 1;
    counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
  }
  return query.apply(this, args);
};

subscribe('http.client.request.start', (msg) => {
  const req = (msg as { request: ClientRequest }).request;
  const key = `${req.method} :${String((req as unknown as { host?: string }).host ?? '')}${(req.getHeader('host') as string | undefined)?.replace(/^[^:]*/, '') ?? ''}`;
  counts.httpRequests[key] = (counts.httpRequests[key] ?? 0) + 1;
});
subscribe('net.client.socket', () => {
  counts.tcpConnects += 1;
});

/** utime + stime of every thread, by its name (threads of one kind summed: `V8 Worker` ×n, `libuv-worker` ×4). */
function threadsUs(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const key = tid === String(process.pid) ? 'main thread' : name.replace(/\d+$/, '').trim();
      out[key] = (out[key] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100; // clock ticks of 10 ms
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

process.on('message', (m: unknown) => {
  if ((m as { probe?: string } | null)?.probe !== 'counts') return;
  const cpu = process.cpuUsage();
  process.send?.({ probe: 'counts', counts: { ...counts, byKind: { ...counts.byKind }, httpRequests: { ...counts.httpRequests }, cpuUs: cpu.user + cpu.system, sysUs: cpu.system, threadsUs: threadsUs() } });
});
// The channel must not keep the service alive when it is told to stop.
process.channel?.unref();
