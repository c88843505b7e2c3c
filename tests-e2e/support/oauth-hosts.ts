import type { BrowserContext } from 'playwright-core';
import { waitFor } from '@sched/testing';
import type { OAuthProvider } from './oauth-connect';
import type { System } from './system';
import { addAllDayHost, admin, type Tenant } from './tenant';

/**
 * Hosts whose calendar is Google or Microsoft 365, connected as an operator and a host would: the
 * admin API starts the OAuth flow, the host's browser (Chromium) opens the provider's authorization
 * URL, the provider (a fake of @sched/testing, which consents at once) redirects to the gateway's
 * public /oauth/callback, and the page there says whether it worked.
 */

export type { OAuthProvider };

export interface OAuthHost {
  hostId: string;
  name: string;
  eventTypeId: string;
}

/** A host in the tenant's workspace (UTC, available all day, every day; no conferencing template, so video meetings get the provider's own link) and a 30-minute video Event Type, not yet bookable: no calendar. */
export async function addHost(sys: System, t: Tenant, name: string, slug: string): Promise<OAuthHost> {
  const base = `/admin/v1/workspaces/${t.workspaceId}`;
  const hostId = await addAllDayHost(sys, t.workspaceId, { name, email: `${slug}@example.com`, timezone: 'UTC' });
  const evt = await admin(sys, 'POST', `${base}/event-types`, { host_id: hostId, name: `${name} call`, slug, duration_minutes: 30, meeting_type: 'video' });
  return { hostId, name, eventTypeId: evt.id };
}

/** What the host saw: where the browser ended up and the callback page's heading and text. */
export interface ConsentOutcome {
  finalUrl: string;
  status: number | undefined;
  title: string;
  text: string;
}

/**
 * Starts the connect flow through the admin API and follows it in the browser: authorization URL →
 * the provider's consent → 302 to the gateway's callback page.
 */
export async function connectWithOAuth(sys: System, t: Tenant, context: BrowserContext, host: OAuthHost, provider: OAuthProvider): Promise<{ start: { provider: string; authorization_url: string; expires_at: string }; outcome: ConsentOutcome }> {
  const start = await admin(sys, 'POST', `/admin/v1/workspaces/${t.workspaceId}/hosts/${host.hostId}/calendar/oauth`, { provider });
  const page = await context.newPage();
  try {
    const response = await page.goto(start.authorization_url);
    await page.locator('main h1').waitFor();
    return {
      start,
      outcome: {
        finalUrl: page.url(),
        status: response?.status(),
        title: (await page.locator('main h1').textContent())!.trim(),
        text: (await page.locator('main').innerText()).trim(),
      },
    };
  } finally {
    await page.close();
  }
}

/** Waits until the Event Type is bookable (its host's calendar connected, as availability learnt from calendar.connection_updated). */
export async function waitBookable(t: Tenant, eventTypeId: string): Promise<void> {
  await waitFor(async () => (await t.client.eventTypes.get(eventTypeId)).bookable, { timeoutMs: 20000, intervalMs: 200 });
}

/**
 * The Google event id documented for a Booking (docs/calendar-sync.md, Google adapter): the Booking's
 * UID `<booking_id>@scheduling-service` in base32hex (RFC 4648 §7), lowercase, unpadded. Written here
 * from the RFC, bit by bit, as the test's own expectation (not the adapter's code).
 */
export function expectedGoogleEventId(bookingId: string): string {
  const bits = [...Buffer.from(`${bookingId}@scheduling-service`, 'utf8')].map((b) => b.toString(2).padStart(8, '0')).join('');
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out;
}

/** The Microsoft event property that carries the Booking's UID (docs/calendar-sync.md, Microsoft adapter). */
export const MICROSOFT_BOOKING_PROPERTY_NAME = / Name SchedulingServiceBookingUid$/;

/** UTC midnight `days` after today's, as a Date. */
export function utcDay(days: number): Date {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + days));
}

export const at = (day: Date, hour: number, minute = 0): Date => new Date(day.getTime() + (hour * 60 + minute) * 60000);
export const dateOf = (d: Date): string => d.toISOString().slice(0, 10);
