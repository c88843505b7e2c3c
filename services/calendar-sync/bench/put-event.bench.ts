// CPU of the CalDAV adapter's putEvent alone (tsdav, got, ical.js and how we call them), against a stub
// CalDAV server in another process that answers every PUT with 201 and closes the connection, as
// Radicale does. Counts this process's CPU (process.cpuUsage) per write over ROUNDS rounds of N writes,
// one at a time, and, after each round, over the provider's deadline (TIMEOUT_MS) plus a margin, so work
// a finished write leaves behind (a timer that still fires) is counted too. SERVICE_SRC=<another copy
// of src/> loads the adapter from there (before/after, as write.bench.ts). docs/calendar-sync.md.
//
//   node --import tsx services/calendar-sync/bench/put-event.bench.ts
//   N=500 ROUNDS=4 TIMEOUT_MS=1000 WARMUP=300
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { CalendarAccess, OutgoingEvent } from '../src/domain/calendar-provider';
import type { CalDavProvider as Provider } from '../src/providers/caldav/caldav-provider';

const N = Number(process.env.N ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS ?? 1000);
const WARMUP = Number(process.env.WARMUP ?? 300);

const STUB = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(201, { etag: '"e1"', connection: 'close' }); res.end(); });
});
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

async function main(): Promise<void> {
  const src = process.env.SERVICE_SRC ? resolve(process.env.SERVICE_SRC) : join(__dirname, '../src');
  const { CalDavProvider } = (await import(join(src, 'providers/caldav/caldav-provider.ts'))) as { CalDavProvider: typeof Provider };
  const stub = spawn(process.execPath, ['-e', STUB], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((r) => stub.once('message', (p) => r(Number(p))));
  const base = `http://127.0.0.1:${port}`;
  const access: CalendarAccess = { provider: 'caldav', url: base, username: 'host0', password: 'bench-password', calendarUrl: `${base}/host0/bench/` };
  const provider = new CalDavProvider({ timeoutMs: TIMEOUT_MS, mode: 'local' });
  const event = (i: number): OutgoingEvent => ({
    uid: `bkg_${i}@scheduling-service`,
    objectName: `bkg_${i}.ics`,
    start: new Date(Date.UTC(2026, 11, 1, 9, i % 60)),
    end: new Date(Date.UTC(2026, 11, 1, 10, i % 60)),
    sequence: 1,
    summary: 'Phone call with Ada Lovelace',
    description: 'Booked through the scheduling service.',
    location: null,
    joinUrl: null,
    video: false,
  });
  const settle = () => new Promise((r) => setTimeout(r, TIMEOUT_MS + 300));
  try {
    for (let i = 0; i < WARMUP; i++) await provider.putEvent(access, event(i));
    await settle();
    const perWrite: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const t0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await provider.putEvent(access, event(i));
      await settle();
      const t = process.cpuUsage(t0);
      perWrite.push(Math.round((t.user + t.system) / N));
    }
    process.stdout.write(`${JSON.stringify({ bench: 'caldav-put-event', src, n: N, rounds: ROUNDS, cpu_us_per_write: perWrite })}\n`);
  } finally {
    provider.close();
    stub.kill();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
