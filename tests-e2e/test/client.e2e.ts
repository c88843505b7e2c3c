import { SchedulingClient, type ResponseInfo } from '@sched/client';
import { waitFor } from '@sched/testing';
import { startSystem, type System } from '../support/system';
import { freeStarts, setUpTenant, startReceiver, type Tenant } from '../support/tenant';

let sys: System;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: Tenant;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  t = await setUpTenant(sys, receiver);
}, 240000);

afterAll(async () => {
  await receiver?.close();
  await sys?.stop();
});

async function adminPost(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${sys.gatewayUrl}/admin/v1/workspaces/${t.workspaceId}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as any).data;
}

describe('@sched/client 1.0.0 against the running system', () => {
  it('covers every v1 endpoint', async () => {
    const c = t.client;
    const listed: string[] = [];
    for await (const et of c.eventTypes.list()) listed.push(et.id);
    expect(listed).toContain(t.eventTypeId);
    expect((await c.eventTypes.get(t.eventTypeId)).bookable).toBe(true);
    const [a, b] = await freeStarts(t, 2);
    const guest = { name: 'Grace', email: 'grace@example.com', timezone: 'America/New_York' };
    const booking = await c.bookings.create({ event_type_id: t.eventTypeId, start_at: a!, guest });
    expect((await c.bookings.get(booking.id)).id).toBe(booking.id);
    expect((await c.bookings.list({ event_type_id: t.eventTypeId }).page()).data.map((x) => x.id)).toContain(booking.id);
    expect((await c.bookings.reschedule(booking.id, { start_at: b!, expected_version: 1 })).version).toBe(2);
    expect((await c.bookings.cancel(booking.id)).status).toBe('cancelled');

    const vip = await adminPost('/event-types', { host_id: t.hostId, name: 'VIP', slug: 'vip', duration_minutes: 30, meeting_type: 'video', access: 'invitation_only' });
    const inv = await c.bookingInvitations.create({ event_type_id: vip.id, expires_at: new Date(Date.now() + 86400000).toISOString(), max_uses: 2, email: 'vip@example.com' });
    expect(inv.invitation_url).toMatch(/\/book\/i\/[A-Za-z0-9_-]{40,}$/);
    expect(inv.status).toBe('active');
    expect(await c.bookingInvitations.get(inv.id)).not.toHaveProperty('invitation_url');
    const invs: string[] = [];
    for await (const i of c.bookingInvitations.list({ status: 'active' })) invs.push(i.id);
    expect(invs).toContain(inv.id);
    const reissued = await c.bookingInvitations.reissue(inv.id);
    expect(reissued.invitation_url).not.toBe(inv.invitation_url);
    expect((await c.bookingInvitations.revoke(inv.id)).status).toBe('revoked');
    await expect(c.bookingInvitations.revoke(inv.id)).rejects.toMatchObject({ code: 'invitation_not_active', status: 409 });
  });

  it('retries a create whose answer was lost with the same Idempotency-Key: one Booking, the first answer replayed', async () => {
    const [start] = await freeStarts(t, 1);
    const keys: string[] = [];
    const infos: ResponseInfo[] = [];
    let dropped = false;
    const flaky: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST') keys.push(new Headers(init.headers).get('idempotency-key') ?? '');
      // The server committed; the network loses its answer once.
      if (init?.method === 'POST' && !dropped) {
        dropped = true;
        throw new TypeError('fetch failed (answer lost on the way back)');
      }
      return res;
    };
    const client = new SchedulingClient({ baseUrl: sys.gatewayUrl, apiKey: t.apiKey, fetch: flaky, retryBaseDelayMs: 10, onResponse: (i) => infos.push(i) });
    const email = `retry-${Date.now()}@example.com`;
    const booking = await client.bookings.create({ event_type_id: t.eventTypeId, start_at: start!, guest: { name: 'Retry', email, timezone: 'UTC' } });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/.+/);
    expect(keys[1]).toBe(keys[0]);
    expect(infos.at(-1)).toMatchObject({ status: 201, idempotentReplayed: true });
    const mine: string[] = [];
    for await (const b of t.client.bookings.list({ event_type_id: t.eventTypeId })) if (b.guest.email === email) mine.push(b.id);
    expect(mine).toEqual([booking.id]);
  });

  it('iterates 250 Bookings across pages with for await, each once, in start order; webhooks verify', async () => {
    const evt = await adminPost('/event-types', { host_id: t.hostId, name: 'Many', slug: 'many', duration_minutes: 10, meeting_type: 'phone' });
    await waitFor(async () => (await t.client.eventTypes.get(evt.id)).bookable, { timeoutMs: 20000 });
    const day = (o: number) => new Date(Date.now() + o * 86400000).toISOString().slice(0, 10);
    const starts = (await t.client.eventTypes.slots(evt.id, { from: day(10), to: day(14), timezone: 'UTC' })).map((s) => s.start_at).slice(0, 250);
    expect(starts).toHaveLength(250);
    for (let i = 0; i < starts.length; i += 25) {
      await Promise.all(
        starts.slice(i, i + 25).map((start_at, j) => t.client.bookings.create({ event_type_id: evt.id, start_at, guest: { name: `P${i + j}`, email: `p${i + j}@example.com`, timezone: 'UTC' } })),
      );
    }
    const seen: string[] = [];
    for await (const b of t.client.bookings.list({ event_type_id: evt.id, limit: 100 })) seen.push(b.start_at);
    expect(seen).toHaveLength(250);
    expect(seen).toEqual([...starts]);
    // The receiver verifies every delivery with verifyWebhook; a bad signature would be refused and never recorded.
    await waitFor(() => receiver.received.filter((w) => w.type === 'booking.created').length >= 250, { timeoutMs: 60000 });
  });
});
