import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { startOAuthFakes, waitFor, type OAuthFakes } from '@sched/testing';
import { addHost, at, connectWithOAuth, dateOf, expectedGoogleEventId, MICROSOFT_BOOKING_PROPERTY_NAME, utcDay, waitBookable, type OAuthHost, type OAuthProvider } from '../support/oauth-hosts';
import { bookFirstSlotOnPage } from '../support/booking-page';
import { startSystem, type System } from '../support/system';
import { admin, setUpTenant, startReceiver, type Tenant } from '../support/tenant';

/**
 * Issue 19 end to end: hosts whose calendars are Google Calendar and Microsoft 365, connected through
 * the OAuth flow in Chromium (admin API start → the provider's consent → the gateway's callback page),
 * then the same flows booking-lifecycle.e2e.ts and booking-page.e2e.ts run for CalDAV: busy times out
 * of the Slots API, create → calendar event + webhooks → reschedule → cancel through the API, and a
 * booking made on the hosted booking page. The providers are the local fakes of @sched/testing,
 * started in this process; every service is its own process (support/system.ts), calendar-sync
 * configured against the fakes (Google over HTTP, Microsoft over HTTPS with its throwaway CA).
 */

let fakes: OAuthFakes;
let sys: System;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: Tenant;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  fakes = await startOAuthFakes();
  sys = await startSystem({
    env: { CALENDAR_WRITE_RETRY_DELAYS_MS: '200,500,1000', WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,1000,1000,1000,1000' },
    serviceEnv: { 'calendar-sync': fakes.env },
  });
  receiver = await startReceiver();
  // The workspace (API key, webhook endpoint) of the CalDAV suites; its OAuth hosts are added below.
  t = await setUpTenant(sys, receiver);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // The Microsoft fake serves HTTPS with a certificate made at its start, which Chromium cannot be told to trust.
  context = await browser.newContext({ timezoneId: 'Europe/Paris', locale: 'en-GB', ignoreHTTPSErrors: true });
}, 240000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
  await fakes?.close();
});

const webhooks = (bookingId: string, type: string) => receiver.received.filter((w) => w.bookingId === bookingId && w.type === type);
const MINUTE = 60000;

/** A Booking's event as the fake provider holds it; null when there is none (never written, or deleted). */
interface ProviderEvent {
  start: number;
  end: number;
  joinUrl: string | null;
}

interface ProviderCase {
  provider: OAuthProvider;
  /** How the callback page names the provider. */
  label: string;
  hostName: string;
  slug: string;
  /** The connection's calendar_url when none was asked for: Google's `primary`, Microsoft's default calendar id. */
  calendarUrl: () => string;
  /** Puts the host's busy events (a timed one, an all-day one, a daily series with one occurrence removed) into the fake calendar. */
  addBusy(): void;
  /** Busy spans the Slots API must leave out, and starts it must still offer (so the check cannot pass on an empty answer). */
  busy: () => Array<[Date, Date]>;
  free: () => Date[];
  event(bookingId: string): ProviderEvent | null;
}

const GOOGLE_ACCOUNT = 'host@example.com';

const CASES: ProviderCase[] = [
  {
    provider: 'google',
    label: 'Google Calendar',
    hostName: 'Gus Google',
    slug: 'gus',
    calendarUrl: () => 'primary',
    addBusy() {
      fakes.google.consentAccount = GOOGLE_ACCOUNT;
      fakes.google.addEvent(GOOGLE_ACCOUNT, { summary: 'Dentist', start: { dateTime: at(utcDay(2), 10).toISOString() }, end: { dateTime: at(utcDay(2), 11).toISOString() } });
      fakes.google.addEvent(GOOGLE_ACCOUNT, { summary: 'Offsite', start: { date: dateOf(utcDay(3)) }, end: { date: dateOf(utcDay(4)) } });
      const exdate = at(utcDay(2), 14).toISOString().slice(0, 19).replace(/[-:]/g, '') + 'Z';
      fakes.google.addEvent(GOOGLE_ACCOUNT, {
        summary: 'Stand-up',
        start: { dateTime: at(utcDay(1), 14).toISOString(), timeZone: 'UTC' },
        end: { dateTime: at(utcDay(1), 15).toISOString(), timeZone: 'UTC' },
        recurrence: ['RRULE:FREQ=DAILY;COUNT=5', `EXDATE:${exdate}`],
      });
    },
    busy: () => [
      [at(utcDay(2), 10), at(utcDay(2), 11)],
      [utcDay(3), utcDay(4)],
      ...[1, 4, 5].map((d) => [at(utcDay(d), 14), at(utcDay(d), 15)] as [Date, Date]),
    ],
    // Around the timed event; the series' removed occurrence; the day after the all-day event.
    free: () => [at(utcDay(2), 9), at(utcDay(2), 11), at(utcDay(2), 14), at(utcDay(4), 10)],
    event(bookingId) {
      const e = fakes.google.event(GOOGLE_ACCOUNT, expectedGoogleEventId(bookingId));
      if (!e || e.status === 'cancelled') return null;
      return { start: Date.parse(e.start.dateTime), end: Date.parse(e.end.dateTime), joinUrl: e.hangoutLink ?? null };
    },
  },
  {
    provider: 'microsoft',
    label: 'Microsoft 365',
    hostName: 'Mia Microsoft',
    slug: 'mia',
    calendarUrl: () => fakes.microsoft.calendarId,
    addBusy() {
      fakes.microsoft.addEvent({ subject: 'Dentist', start: at(utcDay(2), 8), end: at(utcDay(2), 9) });
      fakes.microsoft.addEvent({ subject: 'Out of office', start: dateOf(utcDay(4)), end: dateOf(utcDay(5)), showAs: 'oof' });
      fakes.microsoft.addEvent({ subject: 'Stand-up', start: at(utcDay(1), 16), end: at(utcDay(1), 17), rrule: 'FREQ=DAILY;COUNT=5', deletedOccurrences: [at(utcDay(2), 16)] });
    },
    busy: () => [
      [at(utcDay(2), 8), at(utcDay(2), 9)],
      [utcDay(4), utcDay(5)],
      ...[1, 3, 5].map((d) => [at(utcDay(d), 16), at(utcDay(d), 17)] as [Date, Date]),
    ],
    free: () => [at(utcDay(2), 7), at(utcDay(2), 9), at(utcDay(2), 16), at(utcDay(5), 10)],
    event(bookingId) {
      const uid = `${bookingId}@scheduling-service`;
      const found = fakes.microsoft.events().filter((e) => e.extendedProperties.some((p) => MICROSOFT_BOOKING_PROPERTY_NAME.test(p.id) && p.value === uid));
      if (found.length > 1) throw new Error(`${found.length} Microsoft events for ${bookingId}`);
      const e = found[0];
      return e ? { start: e.start.getTime(), end: e.end.getTime(), joinUrl: e.onlineMeeting?.joinUrl ?? null } : null;
    },
  },
];

async function slotStarts(eventTypeId: string, fromDay: number, toDay: number): Promise<number[]> {
  const slots = await t.client.eventTypes.slots(eventTypeId, { from: dateOf(utcDay(fromDay)), to: dateOf(utcDay(toDay)), timezone: 'UTC' });
  return slots.map((s) => Date.parse(s.start_at));
}

describe.each(CASES)('a host on $label, connected with OAuth', (c) => {
  let host: OAuthHost;

  it('connects: the admin API start, the consent in Chromium, the callback page says connected, the connection is listed and the Event Type becomes bookable', async () => {
    host = await addHost(sys, t, c.hostName, c.slug);
    expect(await t.client.eventTypes.get(host.eventTypeId)).toMatchObject({ bookable: false, unavailable_reason: 'calendar_not_connected' });
    c.addBusy();

    const { start, outcome } = await connectWithOAuth(sys, t, context, host, c.provider);
    expect(start.provider).toBe(c.provider);
    expect(new URL(start.authorization_url).searchParams.get('redirect_uri')).toBe(`${sys.gatewayUrl}/oauth/callback`);
    // The browser went to the provider and came back to the gateway's callback page.
    expect(outcome.finalUrl.startsWith(`${sys.gatewayUrl}/oauth/callback?`)).toBe(true);
    expect(outcome).toMatchObject({ status: 200, title: 'Calendar connected' });
    expect(outcome.text).toContain(`${c.label} is now connected for ${c.hostName}.`);

    const connection = await admin(sys, 'GET', `/admin/v1/workspaces/${t.workspaceId}/hosts/${host.hostId}/calendar`);
    expect(connection).toMatchObject({ host_id: host.hostId, provider: c.provider, calendar_url: c.calendarUrl(), status: 'connected', error_code: null });
    await waitBookable(t, host.eventTypeId);
    expect(await t.client.eventTypes.get(host.eventTypeId)).toMatchObject({ bookable: true, unavailable_reason: null });
  });

  it("leaves the host's busy events (timed, all-day, a daily series) out of the Slots API, and nothing else", async () => {
    const starts = await slotStarts(host.eventTypeId, 1, 7);
    const overlapping = starts.filter((s) => c.busy().some(([from, to]) => s < to.getTime() && s + 30 * MINUTE > from.getTime()));
    expect(overlapping.map((s) => new Date(s).toISOString())).toEqual([]);
    for (const free of c.free()) expect(starts).toContain(free.getTime());
  });

  it('create → calendar event with the provider meeting link + webhooks → reschedule (event moved) → cancel (event deleted), through the TypeScript client', async () => {
    const first = at(utcDay(6), 9).toISOString();
    const second = at(utcDay(6), 12).toISOString();
    const offered = await slotStarts(host.eventTypeId, 6, 6);
    expect(offered).toEqual(expect.arrayContaining([Date.parse(first), Date.parse(second)]));

    const created = await t.client.bookings.create({ event_type_id: host.eventTypeId, start_at: first, guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' } });
    expect(created).toMatchObject({ status: 'confirmed', version: 1, source: 'api', calendar: { status: 'pending' }, meeting: { type: 'video', join_url: null } });
    await waitFor(() => webhooks(created.id, 'booking.created').length === 1, { timeoutMs: 20000 });
    const synced = await waitFor(async () => {
      const b = await t.client.bookings.get(created.id);
      return b.calendar.status === 'synced' ? b : null;
    }, { timeoutMs: 30000, intervalMs: 200 });
    const written = c.event(created.id);
    expect(written).toEqual({ start: Date.parse(first), end: Date.parse(first) + 30 * MINUTE, joinUrl: expect.stringMatching(/^https:\/\//) });
    // No host template: the join URL is the meeting the provider made (Meet / Teams).
    expect(synced.meeting.join_url).toBe(written!.joinUrl);
    await waitFor(() => webhooks(created.id, 'calendar.created').length === 1, { timeoutMs: 20000 });
    expect(webhooks(created.id, 'calendar.created')[0]!.calendarStatus).toBe('synced');
    expect(await slotStarts(host.eventTypeId, 6, 6)).not.toContain(Date.parse(first));

    const moved = await t.client.bookings.reschedule(created.id, { start_at: second, expected_version: 1 });
    expect(moved).toMatchObject({ version: 2, calendar: { status: 'pending' } });
    expect(Date.parse(moved.start_at)).toBe(Date.parse(second));
    await waitFor(() => webhooks(created.id, 'booking.rescheduled').length === 1, { timeoutMs: 20000 });
    await waitFor(async () => (await t.client.bookings.get(created.id)).calendar.status === 'synced', { timeoutMs: 30000, intervalMs: 200 });
    expect(c.event(created.id)).toEqual({ start: Date.parse(second), end: Date.parse(second) + 30 * MINUTE, joinUrl: written!.joinUrl });

    const cancelled = await t.client.bookings.cancel(created.id, { expected_version: 2 });
    expect(cancelled).toMatchObject({ status: 'cancelled', version: 3 });
    await waitFor(() => webhooks(created.id, 'booking.cancelled').length === 1, { timeoutMs: 20000 });
    await waitFor(() => c.event(created.id) === null, { timeoutMs: 30000, intervalMs: 200 });
  });

  it('books through an invitation on the hosted booking page in Chromium: the event lands in the provider calendar', async () => {
    const evt = await admin(sys, 'POST', `/admin/v1/workspaces/${t.workspaceId}/event-types`, { host_id: host.hostId, name: 'Portfolio review', slug: `${c.slug}-review`, duration_minutes: 30, meeting_type: 'video', access: 'invitation_only' });
    await waitBookable(t, evt.id);
    const inv = await t.client.bookingInvitations.create({ event_type_id: evt.id, expires_at: new Date(Date.now() + 7 * 86400000).toISOString(), max_uses: 1 });

    const bookingId = await bookFirstSlotOnPage(context, inv.invitation_url, { heading: 'Portfolio review', name: 'Grace Hopper', email: 'grace@example.com' });

    const booking = await t.client.bookings.get(bookingId);
    expect(booking).toMatchObject({ source: 'booking_page', status: 'confirmed', event_type_id: evt.id, guest: { name: 'Grace Hopper', email: 'grace@example.com' } });
    // The page offered only free times: not inside any of the host's busy events.
    expect(c.busy().some(([from, to]) => Date.parse(booking.start_at) < to.getTime() && Date.parse(booking.end_at) > from.getTime())).toBe(false);
    await waitFor(() => webhooks(bookingId, 'booking.created').length === 1, { timeoutMs: 20000 });
    await waitFor(async () => (await t.client.bookings.get(bookingId)).calendar.status === 'synced', { timeoutMs: 30000, intervalMs: 200 });
    expect(c.event(bookingId)).toEqual({ start: Date.parse(booking.start_at), end: Date.parse(booking.end_at), joinUrl: expect.stringMatching(/^https:\/\//) });
  });
});
