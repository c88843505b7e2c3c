import { makeBooking } from '../../contracts/test/fixtures';
import type { Booking } from '../src';
import { clientWithStub } from './support/harness';
import { page, type StubServer } from './support/stub-server';

let stub: StubServer;
afterEach(async () => {
  await stub.close();
  expect(stub.mismatches).toEqual([]);
});

/** Serves `total` Bookings in pages of `limit`, with the cursor being the offset (opaque to the client). */
function serveBookings(s: StubServer, total: number): Booking[] {
  const all = Array.from({ length: total }, () => makeBooking());
  s.handle((req) => {
    const limit = Number(req.query.get('limit') ?? '20');
    const from = Number(req.query.get('cursor') ?? '0');
    const next = from + limit < total ? String(from + limit) : null;
    return page(all.slice(from, from + limit), next);
  });
  return all;
}

describe('cursor iteration', () => {
  it('for await walks all 250 Bookings over 3 pages (100 + 100 + 50), keeping the filters on every page', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    const all = serveBookings(stub, 250);
    const seen: string[] = [];
    for await (const b of t.client.bookings.list({ status: 'confirmed', limit: 100 })) seen.push(b.id);
    expect(seen).toEqual(all.map((b) => b.id));
    expect(stub.requests.map((r) => Object.fromEntries(r.query))).toEqual([
      { status: 'confirmed', limit: '100' },
      { status: 'confirmed', limit: '100', cursor: '100' },
      { status: 'confirmed', limit: '100', cursor: '200' },
    ]);
  });

  it('page() fetches one page with next_cursor and request_id; page(cursor) the next; the last has next_cursor null', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    const all = serveBookings(stub, 250);
    const list = t.client.bookings.list({ limit: 100 });
    const first = await list.page();
    expect(first.data.map((b) => b.id)).toEqual(all.slice(0, 100).map((b) => b.id));
    expect(first.next_cursor).toBe('100');
    expect(first.request_id).toMatch(/^req_stub_/);
    const third = await list.page('200');
    expect(third.data).toHaveLength(50);
    expect(third.next_cursor).toBeNull();
    expect(stub.requests).toHaveLength(2);
  });

  it('pages() yields each page, toArray() collects everything, and an empty list yields nothing after one request', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    serveBookings(stub, 45);
    const sizes: number[] = [];
    for await (const p of t.client.bookings.list({ limit: 20 }).pages()) sizes.push(p.data.length);
    expect(sizes).toEqual([20, 20, 5]);
    await expect(t.client.bookings.list({ limit: 20 }).toArray()).resolves.toHaveLength(45);

    stub.handle(() => page([], null));
    const none: unknown[] = [];
    const before = stub.requests.length;
    for await (const inv of t.client.bookingInvitations.list()) none.push(inv);
    for await (const et of t.client.eventTypes.list()) none.push(et);
    expect(none).toEqual([]);
    expect(stub.requests.length - before).toBe(2);
  });
});
