// Time from the 201 of a create to the booking.created webhook arriving at a local receiver, with the
// whole system as separate processes (issue 7's figure), at a steady 50 creates/s.
// Run: node --import tsx tests-e2e/bench/create-to-webhook.bench.ts  → .data/bench/create-to-webhook.json
import { loadavg } from 'node:os';
import { waitFor } from '@sched/testing';
import { startSystem } from '../support/system';
import { setUpTenant, startReceiver } from '../support/tenant';
import { cpuMs, deliveredCreates, machineCpu, machineFacts, pct, post, progress, runBench, stealPct, stealText, writeFigures } from './harness';

const RATE_PER_S = Number(process.env.BENCH_RATE ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const log = progress('create-to-webhook');

async function main(failed: string[]): Promise<void> {
  const loadBefore = loadavg();
  log('starting the system');
  const sys = await startSystem({ env: { LOG_LEVEL: 'warn', ...(process.env.BENCH_SYSTEM_ENV ? JSON.parse(process.env.BENCH_SYSTEM_ENV) : {}) } });
  // The receiver answers at once and verifies every delivery after the measured interval (verifyPending below).
  const receiver = await startReceiver({ verify: 'after' });
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
    const starts = (await t.client.eventTypes.slots(evt, { from: day(1), to: day(30), timezone: 'UTC' })).map((s) => s.start_at);
    const total = RATE_PER_S * DURATION_S;
    if (starts.length < total) throw new Error(`only ${starts.length} free starts for ${total} creates`);

    log(`${total} creates at ${RATE_PER_S}/s`);
    const machineBefore = machineCpu(sys);
    // By process (a split service has two: its CPU is their sum).
    const cpuBefore = new Map(sys.processes.map((p) => [p, cpuMs(p.child.pid)]));
    const created = new Map<string, number>();
    const failures: number[] = [];
    const createMs: number[] = [];
    const started = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE_PER_S;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sentAt = Date.now();
      inflight.push(
        post(`${sys.gatewayUrl}/v1/bookings`, { authorization: `Bearer ${t.apiKey}` }, { event_type_id: evt, start_at: starts[i], guest: { name: `G${i}`, email: `g${i}@example.com`, timezone: 'UTC' } }).then(
          ({ status, body }) => {
            const at = Date.now();
            createMs.push(at - sentAt);
            const data = (JSON.parse(body) as { data?: { id: string } }).data;
            if (status === 201 && data) created.set(data.id, at);
            else failures.push(status);
          },
        ),
      );
    }
    await Promise.all(inflight);
    log(`${created.size} created; waiting for every booking.created webhook`);
    const delivered = deliveredCreates(receiver.received);
    await waitFor(() => [...created.keys()].every((id) => delivered().has(id)), { timeoutMs: 60000, intervalMs: 100 });
    const cpuByService = new Map<string, number>();
    for (const p of sys.processes) cpuByService.set(p.service, (cpuByService.get(p.service) ?? 0) + cpuMs(p.child.pid) - (cpuBefore.get(p) ?? 0));
    const cpuPerBooking = Object.fromEntries([...cpuByService].map(([service, ms]) => [service, +(ms / Math.max(created.size, 1)).toFixed(2)]));
    const machineAfter = machineCpu(sys);
    const steal = stealPct(machineBefore.times, machineAfter.times);
    log(stealText(steal));
    log(`${receiver.verifyPending()} webhook deliveries verified (all ${receiver.received.length} received so far are)`);
    const machineCpuPerBooking = Object.fromEntries(
      [...machineAfter.groups.entries()]
        .map(([k, v]) => [k, +((v - (machineBefore.groups.get(k) ?? 0)) / Math.max(created.size, 1)).toFixed(2)] as const)
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1]),
    );
    // Where the time goes, from the services' own rows: outbox row committed → relay round that
    // published it → webhook-dispatch inbox → delivery succeeded.
    const stages = await sys.db.adminPool.query<{ booking_id: string; relay_at: number; inbox_at: number; done_at: number }>(`
      SELECT o.payload->'data'->'booking'->>'id' AS booking_id,
             extract(epoch FROM o.published_at) * 1000 AS relay_at,
             extract(epoch FROM i.received_at) * 1000 AS inbox_at,
             extract(epoch FROM d.succeeded_at) * 1000 AS done_at
        FROM booking.outbox o
        JOIN webhook_dispatch.inbox i ON i.event_id = o.id
        JOIN webhook_dispatch.deliveries d ON d.event_id = o.id
       WHERE o.type = 'booking.created'`);
    const spans = { created_to_relay_round: [] as number[], relay_round_to_dispatch_inbox: [] as number[], dispatch_inbox_to_delivered: [] as number[] };
    for (const r of stages.rows) {
      const at = created.get(r.booking_id);
      if (at === undefined) continue;
      spans.created_to_relay_round.push(Number(r.relay_at) - at);
      spans.relay_round_to_dispatch_inbox.push(Number(r.inbox_at) - Number(r.relay_at));
      spans.dispatch_inbox_to_delivered.push(Number(r.done_at) - Number(r.inbox_at));
    }
    const p5099 = (xs: number[]) => ({ p50: +pct(xs, 50).toFixed(1), p99: +pct(xs, 99).toFixed(1) });
    const stageMs = {
      create_request: p5099(createMs),
      created_to_relay_round: p5099(spans.created_to_relay_round),
      relay_round_to_dispatch_inbox: p5099(spans.relay_round_to_dispatch_inbox),
      dispatch_inbox_to_delivered: p5099(spans.dispatch_inbox_to_delivered),
    };
    const latencies = [...created.entries()].map(([id, at]) => delivered().get(id)! - at);
    const figures = {
      benchmark: 'create-to-webhook',
      machine: machineFacts(loadBefore, steal),
      scenario: { rate_per_s: RATE_PER_S, duration_s: DURATION_S, creates: total, background_cpu_nice: sys.backgroundNice },
      created: created.size,
      failed_creates: failures.length,
      webhook_latency_ms: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies) },
      cpu_ms_per_booking: cpuPerBooking,
      machine_cpu_ms_per_booking: machineCpuPerBooking,
      stages_ms: stageMs,
      duplicates_at_receiver: receiver.received.length - new Set(receiver.received.map((w) => w.id)).size,
      targets: { p50_ms: 100, p99_ms: 500 },
    };
    writeFigures('create-to-webhook.json', figures);
    if (failures.length > 0) failed.push(`${failures.length} creates not answered 201: ${[...new Set(failures)].join(', ')}`);
  } finally {
    // The system first: its webhook sender holds keep-alive connections to the receiver and keeps
    // sending its backlog; the receiver's close then verifies what is left (and throws on a bad one).
    try {
      await sys.stop();
    } finally {
      await receiver.close();
    }
  }
}

runBench(log, main);
