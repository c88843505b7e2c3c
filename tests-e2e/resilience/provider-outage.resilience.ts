import { icalTime, startOAuthFakes, vcalendar, vevent, waitFor, type OAuthFakes } from '@sched/testing';
import { connectOAuthCalendar } from '../support/oauth-connect';
import type { TenantOptions } from '../support/tenant';
import { createBooking, manyStarts, recordScenario, sleep, startRig, type Outcome, type Rig } from './harness';

/**
 * One calendar provider outage scenario, run for each provider: CalDAV (the system's own Radicale),
 * Google Calendar and Microsoft 365 (their local fakes, the host connected through the system's OAuth
 * flow). The provider stops answering (connection refused) until it is started again on the same port.
 */

const FRESHNESS_MS = 3000;
/** The one event of the host's own placed in the calendar: an hour of the probed Slots range that must stay busy. */
const SEEDED = 'seeded-busy-hour';

interface ProviderCase {
  key: 'caldav' | 'google' | 'microsoft';
  /** What is stopped, as the report names it. */
  fault: string;
  /** Starts what the provider needs before the system (its fake): calendar-sync's extra env and how the host's calendar is connected. */
  prepare(): Promise<Provider>;
}

interface Provider {
  env: Record<string, string>;
  tenant: TenantOptions;
  /** A busy event of the host's own (not a Booking's) in the host's calendar. */
  addBusy(rig: Rig, start: Date, end: Date): Promise<void>;
  /** Events in the host's calendar other than the seeded one (the Bookings' events). */
  bookingEvents(rig: Rig): Promise<number>;
  down(rig: Rig): Promise<void>;
  up(rig: Rig): Promise<void>;
  close(): Promise<void>;
}

/** Google or Microsoft: both fakes (startOAuthFakes points calendar-sync at both), the host connected to `provider` through OAuth. */
async function oauthProvider(provider: 'google' | 'microsoft', of: (fakes: OAuthFakes) => Omit<Provider, 'env' | 'tenant' | 'close'>): Promise<Provider> {
  const fakes = await startOAuthFakes();
  return {
    env: fakes.env,
    tenant: { connectCalendar: (sys, ws, host) => connectOAuthCalendar(sys, fakes, ws, host, provider) },
    ...of(fakes),
    close: () => fakes.close(),
  };
}

const PROVIDERS: ProviderCase[] = [
  {
    key: 'caldav',
    fault: 'Radicale stopped',
    prepare: async () => ({
      env: {},
      tenant: {},
      addBusy: async (rig, start, end) => {
        const ics = vcalendar(vevent({ UID: SEEDED, DTSTART: icalTime(start), DTEND: icalTime(end), SUMMARY: 'Busy' }));
        await rig.sys.radicale.putObject(rig.t.calendarUser, rig.t.calendarName, `${SEEDED}.ics`, ics);
      },
      bookingEvents: async (rig) => (await rig.sys.radicale.listObjects(rig.t.calendarUser, rig.t.calendarName)).filter((f) => !f.includes(SEEDED)).length,
      down: (rig) => rig.sys.radicale.stop(),
      up: (rig) => rig.sys.radicale.start(),
      close: async () => undefined,
    }),
  },
  {
    key: 'google',
    fault: 'Google Calendar API and token endpoint (fake) not listening',
    prepare: () =>
      oauthProvider('google', ({ google }) => ({
        addBusy: async (_rig, start, end) => void google.addEvent(google.consentAccount, { summary: SEEDED, start: { dateTime: start.toISOString() }, end: { dateTime: end.toISOString() } }),
        bookingEvents: async () => google.events(google.consentAccount).filter((e) => e.summary !== SEEDED && e.status !== 'cancelled').length,
        down: () => google.down(),
        up: () => google.up(),
      })),
  },
  {
    key: 'microsoft',
    fault: 'Microsoft Graph and identity platform (fake) not listening',
    prepare: () =>
      oauthProvider('microsoft', ({ microsoft }) => ({
        addBusy: async (_rig, start, end) => void microsoft.addEvent({ subject: SEEDED, start, end, showAs: 'busy' }),
        bookingEvents: async () => microsoft.events(microsoft.calendarId).filter((e) => e.subject !== SEEDED && !e.isCancelled).length,
        down: () => microsoft.goDown(),
        up: () => microsoft.comeBack(),
      })),
  },
];

interface Probe {
  at: number;
  kind: 'slots' | 'create';
  status: number;
  code?: string;
  envelope: boolean;
  leak: boolean;
  ms: number;
  /** Slots answered 200: the seeded busy hour is left out and the half hours either side are offered. */
  busyHidden?: boolean;
}

const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);
const HALF_HOUR = 30 * 60_000;

const asProbe = (o: Outcome): Probe => ({ at: o.sentAt, kind: 'create', status: o.status, code: o.code, envelope: o.envelope, leak: o.leak, ms: o.ms });

describe.each(PROVIDERS)('provider outage: $key provider down', (c) => {
  let provider: Provider | undefined;
  let rig: Rig;
  // Tomorrow 12:00–13:00 UTC: inside the probed Slots range (tomorrow and the day after), away from the Bookings (from day 3 on).
  const busyStart = new Date(`${day(1)}T12:00:00Z`);
  const busyEnd = new Date(busyStart.getTime() + 2 * HALF_HOUR);

  beforeAll(async () => {
    provider = await c.prepare();
    // Short freshness and refresh interval, so a stale snapshot is reached within the run.
    rig = await startRig({
      serviceEnv: { 'calendar-sync': { ...provider.env, BUSY_FRESHNESS_MS: String(FRESHNESS_MS), REFRESH_INTERVAL_MS: '500' } },
      tenant: provider.tenant,
    });
  }, 180_000);
  afterAll(async () => {
    await rig?.close();
    await provider?.close();
  });

  async function slotsProbe(): Promise<Probe> {
    const at = Date.now();
    try {
      const res = await fetch(`${rig.sys.gatewayUrl}/v1/event-types/${rig.t.eventTypeId}/slots?from=${day(1)}&to=${day(2)}&timezone=UTC`, {
        headers: { authorization: `Bearer ${rig.t.apiKey}` },
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      const json = JSON.parse(text) as { data?: Array<{ start_at: string }>; error?: { code?: string; message?: string } };
      const starts = new Set((json.data ?? []).map((s) => Date.parse(s.start_at)));
      const b = busyStart.getTime();
      const busyHidden = res.status === 200 ? !starts.has(b) && !starts.has(b + HALF_HOUR) && starts.has(b - HALF_HOUR) && starts.has(busyEnd.getTime()) : undefined;
      return { at, kind: 'slots', status: res.status, code: json.error?.code, envelope: typeof json.error?.message === 'string', leak: /\n\s+at |\.js:\d+:\d+/.test(text), ms: Date.now() - at, busyHidden };
    } catch {
      return { at, kind: 'slots', status: 0, envelope: false, leak: false, ms: Date.now() - at };
    }
  }

  it('Slots and creates fail closed with 503 calendar_unavailable once the snapshot is stale, and recover by themselves', async () => {
    const p = provider!;
    // A busy hour of the host's own: the busy times Slots answer with come from this provider.
    await p.addBusy(rig, busyStart, busyEnd);
    await waitFor(async () => (await slotsProbe()).busyHidden === true, { timeoutMs: 30_000, intervalMs: 250 });

    const starts = await manyStarts(rig.t, 120, 3);
    let next = 0;
    const probes: Probe[] = [];
    const probe = async () => {
      const [s, cr] = await Promise.all([slotsProbe(), createBooking(rig, starts[next]!, next, 20_000)]);
      if (cr.status === 201) next++;
      probes.push(s, asProbe(cr));
      return [s, asProbe(cr)] as const;
    };

    // Healthy first.
    const [s0, c0] = await probe();
    expect([s0.status, s0.busyHidden, c0.status]).toEqual([200, true, 201]);

    await p.down(rig);
    const stoppedAt = Date.now();
    // Until the snapshot is older than BUSY_FRESHNESS_MS, the last good snapshot may still answer.
    const closed = await waitFor(
      async () => {
        const [s, cr] = await probe();
        return s.status === 503 && cr.status === 503 ? Date.now() : null;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // Stays closed while the provider is down.
    for (let i = 0; i < 6; i++) {
      const [s, cr] = await probe();
      expect([s.status, s.code, cr.status, cr.code]).toEqual([503, 'calendar_unavailable', 503, 'calendar_unavailable']);
      await sleep(300);
    }

    await p.up(rig);
    const restartedAt = Date.now();
    const recovered = await waitFor(
      async () => {
        const [s, cr] = await probe();
        return s.status === 200 && cr.status === 201 ? Date.now() : null;
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
    const calendar = await waitFor(
      async () => {
        const st = await allSynced();
        return Object.keys(st).length === 1 && st.synced === next ? st : null;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch(async () => allSynced());
    const events = await p.bookingEvents(rig);

    const down = probes.filter((pr) => pr.at >= stoppedAt && pr.at < restartedAt);
    const failures = probes.filter((pr) => pr.status !== 200 && pr.status !== 201);
    const unclear = failures.filter((pr) => pr.status !== 503 || pr.code !== 'calendar_unavailable' || !pr.envelope || pr.leak);

    recordScenario(`provider_outage_${c.key}`, {
      provider: c.key,
      fault: `${c.fault} for ${Math.round((restartedAt - stoppedAt) / 1000)} s (BUSY_FRESHNESS_MS=${FRESHNESS_MS})`,
      requests: probes.length,
      answers: countBy(probes.map((pr) => String(pr.status))),
      slots_answers_while_down: countBy(down.filter((pr) => pr.kind === 'slots').map((pr) => String(pr.status))),
      create_answers_while_down: countBy(down.filter((pr) => pr.kind === 'create').map((pr) => String(pr.status))),
      error_codes: countBy(failures.map((pr) => `${pr.status} ${pr.code ?? ''}`)),
      '5xx_during_outage': down.filter((pr) => pr.status >= 500).length,
      '5xx_after_outage': afterProbes.filter((pr) => pr.status >= 500).length,
      seconds_from_stop_to_fail_closed: Math.round((closed - stoppedAt) / 100) / 10,
      seconds_from_restart_to_recovered: Math.round((recovered - restartedAt) / 100) / 10,
      slowest_answer_while_down_ms: Math.max(0, ...down.map((pr) => pr.ms)),
      no_answer_hangs: probes.filter((pr) => pr.status === 0).length,
      unclear_errors: unclear.length,
      slots_200_showing_the_busy_hour: probes.filter((pr) => pr.kind === 'slots' && pr.status === 200 && !pr.busyHidden).length,
      bookings_created: next,
      bookings_calendar_status_at_end: calendar,
      booking_events_in_calendar_at_end: events,
      calendar_duplicates: Math.max(0, events - next),
    });

    expect(probes.filter((pr) => pr.status === 0)).toEqual([]);
    expect(unclear).toEqual([]);
    expect(calendar).toEqual({ synced: next });
    expect(events).toBe(next);
    expect(afterProbes.map((pr) => pr.status)).toEqual([200, 201, 200, 201, 200, 201, 200, 201, 200, 201]);
    // Every Slots answer, before and after the outage, still leaves out the host's busy hour.
    expect(probes.filter((pr) => pr.kind === 'slots' && pr.status === 200).every((pr) => pr.busyHidden)).toBe(true);
  });
});

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
