// Time from the 201 of a create to the booking.created webhook arriving at a local receiver, with the
// whole system as separate processes (issue 7's figure), at a steady 50 creates/s.
// Run: node --import tsx tests-e2e/bench/create-to-webhook.bench.ts  → .data/bench/create-to-webhook.json
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { waitFor } from '@sched/testing';
import { ROOT, startSystem } from '../support/system';
import { setUpTenant, startReceiver } from '../support/tenant';

const RATE_PER_S = Number(process.env.BENCH_RATE ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);

/** CPU time (user + system) a process has used so far, in ms, from /proc. */
function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const sys = await startSystem({ env: { LOG_LEVEL: 'warn' } });
  const receiver = await startReceiver();
  try {
    const t = await setUpTenant(sys, receiver);
    // A 10-minute Event Type on the all-day schedule gives enough distinct starts for the run.
    const res = await fetch(`${sys.gatewayUrl}/admin/v1/workspaces/${t.workspaceId}/event-types`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host_id: t.hostId, name: 'Bench', slug: 'bench', duration_minutes: 10, meeting_type: 'phone' }),
    });
    const evt = ((await res.json()) as { data: { id: string } }).data.id;
    await waitFor(async () => (await t.client.eventTypes.get(evt)).bookable, { timeoutMs: 20000 });
    const day = (o: number) => new Date(Date.now() + o * 86400000).toISOString().slice(0, 10);
    const starts = (await t.client.eventTypes.slots(evt, { from: day(1), to: day(8), timezone: 'UTC' })).map((s) => s.start_at);
    const total = RATE_PER_S * DURATION_S;
    if (starts.length < total) throw new Error(`only ${starts.length} free starts for ${total} creates`);

    const cpuBefore = new Map(sys.processes.map((p) => [p.service, cpuMs(p.child.pid)]));
    const created = new Map<string, number>();
    const failures: number[] = [];
    const started = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE_PER_S;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(
        fetch(`${sys.gatewayUrl}/v1/bookings`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ event_type_id: evt, start_at: starts[i], guest: { name: `G${i}`, email: `g${i}@example.com`, timezone: 'UTC' } }),
        }).then(async (r) => {
          const at = Date.now();
          const body = (await r.json()) as { data?: { id: string } };
          if (r.status === 201 && body.data) created.set(body.data.id, at);
          else failures.push(r.status);
        }),
      );
    }
    await Promise.all(inflight);
    await waitFor(() => [...created.keys()].every((id) => receiver.received.some((w) => w.bookingId === id && w.type === 'booking.created')), {
      timeoutMs: 60000,
      intervalMs: 100,
    });
    const cpuPerBooking = Object.fromEntries(
      sys.processes.map((p) => [p.service, +((cpuMs(p.child.pid) - (cpuBefore.get(p.service) ?? 0)) / Math.max(created.size, 1)).toFixed(2)]),
    );
    const latencies = [...created.entries()].map(([id, at]) => receiver.received.find((w) => w.bookingId === id && w.type === 'booking.created')!.at - at);
    const figures = {
      benchmark: 'create-to-webhook',
      machine: { cpus: 2, loadavg_before: loadBefore.map((x) => +x.toFixed(2)), loadavg_after: loadavg().map((x) => +x.toFixed(2)) },
      scenario: { rate_per_s: RATE_PER_S, duration_s: DURATION_S, creates: total },
      created: created.size,
      failed_creates: failures.length,
      webhook_latency_ms: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies) },
      cpu_ms_per_booking: cpuPerBooking,
      duplicates_at_receiver: receiver.received.length - new Set(receiver.received.map((w) => w.id)).size,
      targets: { p50_ms: 100, p99_ms: 500 },
    };
    const out = path.join(ROOT, '.data', 'bench');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'create-to-webhook.json'), `${JSON.stringify(figures, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await receiver.close();
    await sys.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
