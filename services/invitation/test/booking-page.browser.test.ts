import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { waitFor } from '@sched/testing';
import { eventType } from './support/stubs';
import { call, startPageSystem, type PageSystem } from './support/page-system';

/**
 * The hosted booking page in real headless Chromium (Debian's /usr/bin/chromium), against the gateway
 * and the invitation service in-process, availability and booking as stubs. One browser for the file.
 */
const ROOT = path.resolve(__dirname, '../../..');
/**
 * Screenshots go to `.data/screenshots/` (ignored), so a test run leaves the tree clean; `pnpm screenshots`
 * runs this file with SCREENSHOTS_DIR=docs/screenshots to update the ones README and docs show.
 */
const SCREENSHOTS = path.resolve(ROOT, process.env.SCREENSHOTS_DIR || '.data/screenshots');
const DAY = 86_400_000;
const slotDay = new Date(Math.floor(Date.now() / DAY) * DAY + 3 * DAY);
const slot = (i: number) => new Date(slotDay.getTime() + (8 + i) * 3600_000 + (i % 2) * 1800_000);
// Eight times on the first day, fewer on the next two, so the page lists several days.
const SLOTS = [
  ...Array.from({ length: 8 }, (_, i) => slot(i)),
  ...Array.from({ length: 4 }, (_, i) => new Date(slot(i).getTime() + DAY)),
  ...Array.from({ length: 2 }, (_, i) => new Date(slot(i).getTime() + 2 * DAY)),
];

let sys: PageSystem;
let ws: { id: string; slug: string; key: string };
let evtId: string;
let browser: Browser;
let context: BrowserContext;

async function invite(body: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  const res = await call(sys.gateway.url, 'POST', '/v1/booking-invitations', {
    token: ws.key,
    json: { event_type_id: evtId, expires_at: new Date(Date.now() + 20 * DAY).toISOString(), max_uses: 1, ...body },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, url: res.body.data.invitation_url };
}

const parisTime = (d: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(d);
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, name), fullPage: true });

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  sys = await startPageSystem({ gatewayEnv: { BOOKING_PAGE_RATE_LIMIT: '100' } });
  ws = await sys.workspace('Northwind Studio');
  evtId = sys.availability.add(ws.id, eventType({ name: 'Portfolio review', description: 'Thirty minutes to walk through your work together.', slug: 'review' }), SLOTS).id;
  sys.availability.add(ws.id, eventType({ name: 'Office hours', description: 'Drop-in questions, open to everyone.', slug: 'office-hours', access: 'public', duration_minutes: 30 }), SLOTS);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ timezoneId: 'Europe/Paris', locale: 'en-GB', viewport: { width: 900, height: 1000 } });
}, 60000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await sys?.stop();
});

describe('the hosted booking page in Chromium', () => {
  it('books through an invitation URL: day, slot, name and email, then a confirmation in the visitor time zone', async () => {
    const inv = await invite();
    const page = await context.newPage();
    await page.goto(inv.url);
    await page.getByRole('heading', { level: 1, name: 'Portfolio review' }).waitFor();
    await page.locator('#slots input[name=slot]').first().waitFor({ state: 'attached' });
    expect(await page.locator('#timezone').inputValue()).toBe('Europe/Paris');
    expect(await page.locator('#date').inputValue()).toBe(slotDay.toISOString().slice(0, 10));
    expect(await page.locator('#event-meta').textContent()).toContain('30 minutes');
    // Slot labels are in the visitor's zone (Paris), not UTC.
    expect(await page.locator('#slots label').first().textContent()).toContain(parisTime(slot(0)));
    await expect(page.locator('#status').textContent()).resolves.toMatch(/8 free times on/);
    await shot(page, 'invitation-slots.png');

    // Another day, then another time zone: the times follow both.
    await page.locator('#next-days button').nth(1).click();
    await waitFor(async () => (await page.locator('#slots label').count()) === 4);
    await page.locator('#timezone').selectOption('America/New_York');
    const nyTime = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit' }).format(new Date(slot(0).getTime() + DAY));
    await waitFor(async () => ((await page.locator('#slots label').first().textContent()) ?? '').startsWith(nyTime));
    await page.locator('#timezone').selectOption('Europe/Paris');
    await page.locator('#next-days button').first().click();
    await waitFor(async () => (await page.locator('#slots label').count()) === 8);

    await page.locator('#slots label').nth(1).click();
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByRole('button', { name: 'Book this time' }).click();
    await page.locator('#confirmation').waitFor({ state: 'visible' });
    const when = await page.locator('#confirmation-when').textContent();
    expect(when).toContain(`${parisTime(slot(1))} – ${parisTime(new Date(slot(1).getTime() + 30 * 60_000))}`);
    expect(when).toContain('(Europe/Paris)');
    expect(await page.locator('#status').textContent()).toBe('Your booking is confirmed.');
    await shot(page, 'invitation-confirmation.png');

    const made = sys.booking.created.find((b) => b.body.invitation_id === inv.id)!;
    expect(made.body).toMatchObject({ source: 'booking_page', start_at: slot(1).toISOString(), guest: { name: 'Grace Hopper', email: 'grace@example.com', timezone: 'Europe/Paris' } });
    expect(await page.locator('#confirmation-id').textContent()).toBe(made.bookingId);
    const read = await call(sys.gateway.url, 'GET', `/v1/booking-invitations/${inv.id}`, { token: ws.key });
    expect(read.body.data).toMatchObject({ used_count: 1, status: 'exhausted' });
    await page.close();
  });

  it('says so when the invitation was revoked, and offers no form', async () => {
    const inv = await invite();
    await call(sys.gateway.url, 'POST', `/v1/booking-invitations/${inv.id}/revoke`, { token: ws.key });
    const page = await context.newPage();
    await page.goto(inv.url);
    await page.getByRole('heading', { name: 'This invitation was revoked' }).waitFor();
    expect(await page.locator('#booking-form').isHidden()).toBe(true);
    expect(await page.locator('#notice').getAttribute('data-state')).toBe('revoked');
    await shot(page, 'invitation-revoked.png');
    await page.close();
  });

  it("explains an email that does not match the invitation's, next to the field", async () => {
    const inv = await invite({ email: 'invited@example.com' });
    const page = await context.newPage();
    await page.goto(inv.url);
    await page.locator('#email-hint').waitFor({ state: 'visible' });
    await page.locator('#slots label').first().click();
    await page.getByLabel('Name').fill('Mallory');
    await page.getByLabel('Email').fill('mallory@example.com');
    await page.getByRole('button', { name: 'Book this time' }).click();
    await page.locator('#email-error').waitFor({ state: 'visible' });
    expect(await page.locator('#email-error').textContent()).toContain('sent to another email address');
    expect(await page.locator('#email').getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'invitation-email-mismatch.png');
    expect(sys.booking.created.some((b) => b.body.invitation_id === inv.id)).toBe(false);
    await page.close();
  });

  it('books a public Event Type page with the keyboard alone', async () => {
    const page = await context.newPage();
    await page.goto(`${sys.gateway.url}/book/${ws.slug}/office-hours`);
    await page.getByRole('heading', { level: 1, name: 'Office hours' }).waitFor();
    await page.locator('#next-days button').first().waitFor();
    await page.locator('#slots input[name=slot]').first().waitFor({ state: 'attached' });
    await shot(page, 'public-page.png');

    await page.locator('#slots input[name=slot]').first().focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('ArrowRight'); // radio group: moves and selects the next time
    expect(await page.locator('#slots input[name=slot]:checked').inputValue()).toBe(slot(1).toISOString());
    await page.keyboard.press('Tab');
    await page.keyboard.type('Alan Turing');
    await page.keyboard.press('Tab');
    await page.keyboard.type('alan@example.com');
    await page.keyboard.press('Enter');
    await page.locator('#confirmation').waitFor({ state: 'visible' });
    const made = sys.booking.created.find((b) => b.body.guest.email === 'alan@example.com')!;
    expect(made.body).toMatchObject({ source: 'booking_page', invitation_id: null, start_at: slot(1).toISOString() });
    await page.close();
  });

  /** Name, email and the slot at `index` of the first day, ready to confirm. */
  async function fillForm(page: Page, index: number, name: string, email: string) {
    await page.locator('#slots input[name=slot]').first().waitFor({ state: 'attached' });
    await page.locator('#slots label').nth(index).click();
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email').fill(email);
  }
  /** The Idempotency-Key of every confirm POST the page sends. */
  function confirmKeys(page: Page): Array<string | undefined> {
    const keys: Array<string | undefined> = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/bookings')) keys.push(r.headers()['idempotency-key']);
    });
    return keys;
  }
  const bookingsOf = (invitationId: string) => sys.booking.created.filter((b) => b.body.invitation_id === invitationId);
  const invitationRead = async (id: string) => (await call(sys.gateway.url, 'GET', `/v1/booking-invitations/${id}`, { token: ws.key })).body.data;

  it('books once on a double click of the confirm button: the button is disabled while the POST is in flight', async () => {
    const inv = await invite({ max_uses: 2 }); // a second POST would have a use left to book with
    const page = await context.newPage();
    const keys = confirmKeys(page);
    // The confirm POST is held in the browser until both clicks are done.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/book/api/invitation/bookings', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(inv.url);
    await fillForm(page, 2, 'Ada Lovelace', 'ada@example.com');
    const button = page.getByRole('button', { name: 'Book this time' });
    await button.dblclick();
    expect(await button.isDisabled()).toBe(true);
    release();
    await page.locator('#confirmation').waitFor({ state: 'visible' });

    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^page_[0-9a-f]{32}$/);
    const made = bookingsOf(inv.id);
    expect(made).toHaveLength(1);
    expect(await page.locator('#confirmation-id').textContent()).toBe(made[0]!.bookingId);
    expect(await invitationRead(inv.id)).toMatchObject({ used_count: 1, status: 'active' });
    await page.close();
  });

  it('books once when the page is reloaded while the confirm POST is in flight, and a retried POST replays it', async () => {
    const inv = await invite({ max_uses: 1 });
    const page = await context.newPage();
    const keys = confirmKeys(page);
    await page.goto(inv.url);
    await fillForm(page, 3, 'Katherine Johnson', 'katherine@example.com');
    sys.booking.setDelay(1500); // booking has the request but has not answered when the page reloads
    try {
      await page.getByRole('button', { name: 'Book this time' }).click();
      await waitFor(() => bookingsOf(inv.id).length === 1, { timeoutMs: 10000, intervalMs: 20 });
      await page.reload();
      // The reloaded page sends the same booking again with its token; the service answers the first
      // result (after "uses in progress" while the first still runs), so the visitor sees the confirmation.
      await page.locator('#confirmation').waitFor({ state: 'visible', timeout: 15000 });
    } finally {
      sys.booking.setDelay(0);
    }
    const made = bookingsOf(inv.id);
    expect(made).toHaveLength(1);
    expect(await page.locator('#confirmation-id').textContent()).toBe(made[0]!.bookingId);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys).size).toBe(1);
    expect(await invitationRead(inv.id)).toMatchObject({ used_count: 1, status: 'exhausted' });

    // After confirming: a reload shows the used-up invitation (nothing resent), and the same POST
    // retried from this tab with the page's token is answered with the same Booking.
    await page.reload();
    await page.locator('#notice').waitFor({ state: 'visible' });
    expect(await page.locator('#notice').getAttribute('data-state')).toBe('exhausted');
    // Runs in the page (a string: this project's TypeScript has no DOM types).
    const retried = await page.evaluate(`(async () => {
      const item = Object.keys(sessionStorage).find((k) => k.startsWith('sched.booking-page.attempt:'));
      const attempt = JSON.parse(sessionStorage.getItem(item));
      const res = await fetch('/book/api/invitation/bookings', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': attempt.key, 'x-invitation-credential': location.pathname.split('/i/')[1] },
        body: attempt.body,
      });
      return { sending: attempt.sending, status: res.status, replayed: res.headers.get('idempotent-replayed'), id: (await res.json()).data.id };
    })()`);
    expect(retried).toEqual({ sending: false, status: 201, replayed: 'true', id: made[0]!.bookingId });
    expect(bookingsOf(inv.id)).toHaveLength(1);
    await page.close();
  });

  it('shows a not-found page for an unknown invitation link', async () => {
    const page = await context.newPage();
    const res = await page.goto(`${sys.gateway.url}/book/i/${'x'.repeat(43)}`);
    expect(res?.status()).toBe(404);
    await page.getByRole('heading', { name: 'This booking link is not valid' }).waitFor();
    await page.close();
  });
});
