import { waitFor } from '@sched/testing';
import { createBooking, manyStarts, recordScenario, sleep, startRig, type Outcome, type Rig } from './harness';

const FRESHNESS_MS = 3000;

let rig: Rig;
beforeAll(async () => {
  // Short freshness and refresh interval, so a stale snapshot is reached within the run.
  rig = await startRig({ serviceEnv: { 'calendar-sync': { BUSY_FRESHNESS_MS: String(FRESHNESS_MS), REFRESH_INTERVAL_MS: '500' } } });
}, 180_000);
afterAll(async () => rig?.close());

interface Probe {
  at: number;
  kind: 'slots' | 'create';
  status: number;
  code?: string;
  envelope: boolean;
  leak: boolean;
  ms: number;
}

const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);

async function slotsProbe(): Promise<Probe> {
  const at = Date.now();
  try {
    const res = await fetch(`${rig.sys.gatewayUrl}/v1/event-types/${rig.t.eventTypeId}/slots?from=${day(1)}&to=${day(2)}&timezone=UTC`, {
      headers: { authorization: `Bearer ${rig.t.apiKey}` },
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    const json = JSON.parse(text) as { error?: { code?: string; message?: string } };
    return { at, kind: 'slots', status: res.status, code: json.error?.code, envelope: typeof json.error?.message === 'string', leak: /\n\s+at |\.js:\d+:\d+/.test(text), ms: Date.now() - at };
  } catch {
    return { at, kind: 'slots', status: 0, envelope: false, leak: false, ms: Date.now() - at };
  }
}

const asProbe = (o: Outcome): Probe => ({ at: o.sentAt, kind: 'create', status: o.status, code: o.code, envelope: o.envelope, leak: o.leak, ms: o.ms });

describe('provider outage: Radicale down', () => {
  it('Slots and creates fail closed with 503 calendar_unavailable once the snapshot is stale, and recover by themselves', async () => {
    const starts = await manyStarts(rig.t, 120, 3);
    let next = 0;
    const probes: Probe[] = [];
    const probe = async () => {
      const [s, c] = await Promise.all([slotsProbe(), createBooking(rig, starts[next]!, next, 20_000)]);
      if (c.status === 201) next++;
      probes.push(s, asProbe(c));
      return [s, asProbe(c)] as const;
    };

    // Healthy first.
    const [s0, c0] = await probe();
    expect([s0.status, c0.status]).toEqual([200, 201]);

    await rig.sys.radicale.stop();
    const stoppedAt = Date.now();
    // Until the snapshot is older than BUSY_FRESHNESS_MS, the last good snapshot may still answer.
    const closed = await waitFor(
      async () => {
        const [s, c] = await probe();
        return s.status === 503 && c.status === 503 ? Date.now() : null;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // Stays closed while the provider is down.
    for (let i = 0; i < 6; i++) {
      const [s, c] = await probe();
      expect([s.status, s.code, c.status, c.code]).toEqual([503, 'calendar_unavailable', 503, 'calendar_unavailable']);
      await sleep(300);
    }

    await rig.sys.radicale.start();
    const restartedAt = Date.now();
    const recovered = await waitFor(
      async () => {
        const [s, c] = await probe();
        return s.status === 200 && c.status === 201 ? Date.now() : null;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const afterProbes: Probe[] = [];
    for (let i = 0; i < 5; i++) afterProbes.push(...(await probe()));

    // Bookings taken while the snapshot was still fresh get their calendar events once the provider is back (write retries).
    const allSynced = async () => {
      const { rows } = await rig.sys.db.adminPool.query<{ status: string; n: string }>(
        'SELECT calendar_status AS status, count(*) AS n FROM booking.bookings WHERE workspace_id = $1 GROUP BY 1',
        [rig.t.workspaceId],
      );
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    };
    const calendar = await waitFor(async () => {
      const c = await allSynced();
      return Object.keys(c).length === 1 && c.synced === next ? c : null;
    }, { timeoutMs: 60_000, intervalMs: 500 }).catch(async () => allSynced());

    const down = probes.filter((p) => p.at >= stoppedAt && p.at < restartedAt);
    const failures = probes.filter((p) => p.status !== 200 && p.status !== 201);
    const unclear = failures.filter((p) => p.status !== 503 || p.code !== 'calendar_unavailable' || !p.envelope || p.leak);

    recordScenario('provider_outage', {
      fault: `Radicale stopped for ${Math.round((restartedAt - stoppedAt) / 1000)} s (BUSY_FRESHNESS_MS=${FRESHNESS_MS})`,
      requests: probes.length,
      answers: countBy(probes.map((p) => String(p.status))),
      slots_answers_while_down: countBy(down.filter((p) => p.kind === 'slots').map((p) => String(p.status))),
      create_answers_while_down: countBy(down.filter((p) => p.kind === 'create').map((p) => String(p.status))),
      error_codes: countBy(failures.map((p) => `${p.status} ${p.code ?? ''}`)),
      '5xx_during_outage': down.filter((p) => p.status >= 500).length,
      '5xx_after_outage': afterProbes.filter((p) => p.status >= 500).length,
      seconds_from_stop_to_fail_closed: Math.round((closed - stoppedAt) / 100) / 10,
      seconds_from_restart_to_recovered: Math.round((recovered - restartedAt) / 100) / 10,
      slowest_answer_while_down_ms: Math.max(0, ...down.map((p) => p.ms)),
      no_answer_hangs: probes.filter((p) => p.status === 0).length,
      unclear_errors: unclear.length,
      bookings_created: next,
      bookings_calendar_status_at_end: calendar,
    });

    expect(probes.filter((p) => p.status === 0)).toEqual([]);
    expect(unclear).toEqual([]);
    expect(calendar).toEqual({ synced: next });
    expect(afterProbes.map((p) => p.status)).toEqual([200, 201, 200, 201, 200, 201, 200, 201, 200, 201]);
  });
});

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
