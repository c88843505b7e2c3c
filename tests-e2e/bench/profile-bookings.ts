/**
 * Where a Booking's CPU goes (docs/performance.md): the whole system as `npm start` runs it, BOOKINGS
 * creates (default 400) through the gateway, CONCURRENCY at a time (default 4), then, unless
 * NO_SETTLE=1, until every Booking is synced to the calendar and its webhooks delivered. Prints CPU per
 * Booking by process group (from /proc), the log lines each service wrote per Booking, and the
 * measured interval on the monotonic clock (µs), so CPU profiles can be cut to it:
 *
 *   SYSTEM_PROFILE_DIR=/tmp/prof node --import tsx tests-e2e/bench/profile-bookings.ts
 *   node scripts/cpu-profile-report.mjs /tmp/prof 400 <from µs> <to µs>
 *
 * A diagnostic, not a benchmark: no targets, nothing written to docs/.
 */
import { startSystem } from '../support/system';
import { setUpTenant, startReceiver } from '../support/tenant';
import { cpuPerUnit, createAll, createEventType, freeStarts, machineCpu, progress, runBench, systemEnv, untilAllSyncedAndDelivered } from './harness';

const BOOKINGS = Number(process.env.BOOKINGS ?? 400);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);
const WARMUP = 30;
const log = progress('profile-bookings');
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

runBench(log, async () => {
  log('starting the system');
  const sys = await startSystem({ env: systemEnv() });
  // The receiver answers at once; every delivery is verified after the measured interval (verifyPending below).
  const receiver = await startReceiver({ verify: 'after' });
  try {
    const t = await setUpTenant(sys, receiver);
    const evt = await createEventType(sys, t, { slug: 'profile', minutes: 5, advanceDays: 62 });
    const pool = await freeStarts(t, evt, 60);
    if (pool.length < WARMUP + BOOKINGS) throw new Error(`only ${pool.length} free starts for ${WARMUP + BOOKINGS} creates`);
    log(`warm-up: ${WARMUP} creates`);
    await createAll(sys, t, evt, pool.slice(0, WARMUP), 4, 'warm');
    await untilAllSyncedAndDelivered(sys, t, receiver.received, { timeoutMs: 60_000 });
    receiver.verifyPending();
    // The measured interval: deliveries wait again until the verifyPending after it.
    receiver.deferVerification();
    const linesBefore = new Map(sys.processes.map((p) => [p, p.lines.length]));
    const before = machineCpu(sys);
    const from = monotonicUs();
    log(`${BOOKINGS} creates, ${CONCURRENCY} at a time`);
    await createAll(sys, t, evt, pool.slice(WARMUP, WARMUP + BOOKINGS), CONCURRENCY, 'profile');
    if (!process.env.NO_SETTLE) await untilAllSyncedAndDelivered(sys, t, receiver.received, { timeoutMs: 300_000 });
    const after = machineCpu(sys);
    const to = monotonicUs();
    log(`${receiver.verifyPending()} webhook deliveries verified`);
    console.log(`interval (monotonic µs): ${from} ${to}`);
    console.log(`CPU ms per Booking: ${JSON.stringify(cpuPerUnit(before, after, BOOKINGS))}`);
    for (const p of sys.processes) {
      const lines = p.lines.slice(linesBefore.get(p));
      const byMessage = new Map<string, number>();
      for (const l of lines) {
        const msg = String(l.msg ?? l.message ?? l.raw).slice(0, 60);
        byMessage.set(msg, (byMessage.get(msg) ?? 0) + 1);
      }
      const perBooking = [...byMessage].map(([m, n]) => `${m} ×${(n / BOOKINGS).toFixed(2)}`).join('; ');
      console.log(`${p.name}: ${(lines.length / BOOKINGS).toFixed(2)} log lines per Booking${perBooking ? ` (${perBooking})` : ''}`);
    }
  } finally {
    // The system first: its webhook sender holds keep-alive connections to the receiver and keeps
    // sending its backlog; the receiver's close then verifies what is left (and throws on a bad one).
    try {
      await sys.stop();
    } finally {
      await receiver.close();
    }
  }
});
