import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { waitFor } from '@sched/testing';
import { bookFirstSlotOnPage } from '../support/booking-page';
import { startSystem, type System } from '../support/system';
import { setUpTenant, startReceiver, type Tenant } from '../support/tenant';

let sys: System;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: Tenant;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  t = await setUpTenant(sys, receiver);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ timezoneId: 'Europe/Paris', locale: 'en-GB' });
}, 240000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});

describe('the hosted booking page on the real services, in Chromium', () => {
  it('books through an invitation: source booking_page, one use counted, the same webhooks, the slot gone', async () => {
    const res = await fetch(`${sys.gatewayUrl}/admin/v1/workspaces/${t.workspaceId}/event-types`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host_id: t.hostId, name: 'Portfolio review', slug: 'review', duration_minutes: 30, meeting_type: 'video', access: 'invitation_only' }),
    });
    const evt = ((await res.json()) as any).data.id as string;
    await waitFor(async () => (await t.client.eventTypes.get(evt)).bookable, { timeoutMs: 20000 });
    const inv = await t.client.bookingInvitations.create({ event_type_id: evt, expires_at: new Date(Date.now() + 7 * 86400000).toISOString(), max_uses: 1 });

    const bookingId = await bookFirstSlotOnPage(context, inv.invitation_url, { heading: 'Portfolio review', name: 'Grace Hopper', email: 'grace@example.com' });

    const booking = await t.client.bookings.get(bookingId);
    expect(booking).toMatchObject({ source: 'booking_page', status: 'confirmed', event_type_id: evt, guest: { name: 'Grace Hopper', email: 'grace@example.com' } });
    await waitFor(async () => (await t.client.bookingInvitations.get(inv.id)).status === 'exhausted', { timeoutMs: 10000 });
    expect((await t.client.bookingInvitations.get(inv.id)).used_count).toBe(1);
    await waitFor(() => receiver.received.some((w) => w.bookingId === bookingId && w.type === 'booking.created'), { timeoutMs: 20000 });
    await waitFor(async () => (await t.client.bookings.get(bookingId)).calendar.status === 'synced', { timeoutMs: 30000 });
    const day = booking.start_at.slice(0, 10);
    await waitFor(async () => !(await t.client.eventTypes.slots(evt, { from: day, to: day, timezone: 'UTC' })).some((s) => s.start_at === booking.start_at), {
      timeoutMs: 10000,
    });

    // The used-up invitation's page says so.
    const again = await context.newPage();
    await again.goto(inv.invitation_url);
    await again.locator('#notice').waitFor({ state: 'visible' });
    expect(await again.locator('#notice').getAttribute('data-state')).toBe('exhausted');
    await again.close();
  });

  it('books once for a double click and a reload while the confirm is in flight: one Booking in the API', async () => {
    const res = await fetch(`${sys.gatewayUrl}/admin/v1/workspaces/${t.workspaceId}/event-types`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host_id: t.hostId, name: 'Studio visit', slug: 'visit', duration_minutes: 30, meeting_type: 'in_person', access: 'invitation_only' }),
    });
    const evt = ((await res.json()) as any).data.id as string;
    await waitFor(async () => (await t.client.eventTypes.get(evt)).bookable, { timeoutMs: 20000 });
    // Two uses: a second POST would have one left to make a second Booking with.
    const inv = await t.client.bookingInvitations.create({ event_type_id: evt, expires_at: new Date(Date.now() + 7 * 86400000).toISOString(), max_uses: 2 });

    const page = await context.newPage();
    const keys: Array<string | undefined> = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/bookings')) keys.push(r.headers()['idempotency-key']);
    });
    // The first confirm reaches the services and is answered, but the answer never reaches the page:
    // the visitor reloads while it is still loading.
    let firstDone!: () => void;
    const answered = new Promise<void>((resolve) => (firstDone = resolve));
    let first = true;
    await page.route('**/book/api/invitation/bookings', async (route) => {
      if (!first) return route.continue();
      first = false;
      await route.fetch();
      firstDone();
    });
    await page.goto(inv.invitation_url);
    await page.locator('#slots input[name=slot]').first().waitFor({ state: 'attached' });
    await page.locator('#slots label').first().click();
    await page.getByLabel('Name').fill('Mary Jackson');
    await page.getByLabel('Email').fill('mary@example.com');
    await page.getByRole('button', { name: 'Book this time' }).dblclick();
    await answered;
    await page.reload();
    await page.locator('#confirmation').waitFor({ state: 'visible' });
    const shown = (await page.locator('#confirmation-id').textContent())!.trim();
    await page.close();

    expect(keys).toHaveLength(2); // one for the double click, one resent after the reload
    expect(keys[1]).toBe(keys[0]);
    const bookings = await t.client.bookings.list({ event_type_id: evt }).toArray();
    expect(bookings.map((b) => b.id)).toEqual([shown]);
    expect(bookings[0]).toMatchObject({ source: 'booking_page', guest: { name: 'Mary Jackson', email: 'mary@example.com' } });
    await waitFor(async () => (await t.client.bookingInvitations.get(inv.id)).used_count === 1, { timeoutMs: 10000 });
    expect(await t.client.bookingInvitations.get(inv.id)).toMatchObject({ used_count: 1, status: 'active' });
  });
});
