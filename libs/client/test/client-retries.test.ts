import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { makeBooking } from '../../contracts/test/fixtures';
import { ApiError, NetworkError, SchedulingClient } from '../src';
import { API_KEY, clientWithStub } from './support/harness';
import { apiError, ok, type StubServer } from './support/stub-server';

const booking = makeBooking();
const body = { event_type_id: booking.event_type_id, start_at: booking.start_at, guest: booking.guest };
let stub: StubServer;

afterEach(async () => {
  // Close first: a failed expectation must not leave a server that keeps Jest from exiting.
  await stub.close();
  expect(stub.mismatches).toEqual([]);
});

/** A port with nothing listening: take a free one, then close it. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('retries', () => {
  it('retries a 503 after the Retry-After it was given, with the same Idempotency-Key, and returns the success', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    stub.enqueue(apiError(503, 'calendar_unavailable', 'The calendar provider is unavailable; try again later.', [], { 'retry-after': '2' }), ok(booking, 201));
    await expect(t.client.bookings.create(body)).resolves.toEqual(booking);
    expect(stub.requests).toHaveLength(2);
    expect(t.sleeps).toEqual([2000]);
    const [first, second] = stub.requests.map((r) => r.headers['idempotency-key']);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    expect(stub.requests[1]!.body).toBe(stub.requests[0]!.body);
  });

  it('retries 429, 502 and 504 too, with backoff when there is no Retry-After, reusing a caller-chosen key', async () => {
    const t = await clientWithStub({ retryBaseDelayMs: 100 });
    stub = t.stub;
    stub.enqueue(
      apiError(429, 'rate_limited', 'Too many requests.', [], { 'retry-after': '1' }),
      apiError(502, 'upstream_unavailable'),
      apiError(504, 'upstream_unavailable'),
      ok(booking, 201),
    );
    await t.client.bookings.create(body, { idempotencyKey: 'my-key-1' });
    expect(stub.requests.map((r) => r.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1', 'my-key-1', 'my-key-1']);
    expect(t.sleeps[0]).toBe(1000);
    // Backoff after attempt n (no Retry-After): between half and all of 100 ms * 2^(n-1).
    expect(t.sleeps[1]).toBeGreaterThanOrEqual(100);
    expect(t.sleeps[1]).toBeLessThanOrEqual(200);
    expect(t.sleeps[2]).toBeGreaterThanOrEqual(200);
    expect(t.sleeps[2]).toBeLessThanOrEqual(400);
  });

  it('retries a dropped connection with the same key, then succeeds', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    stub.enqueue({ status: 0, destroy: true }, ok(booking, 201));
    await expect(t.client.bookings.create(body)).resolves.toEqual(booking);
    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[1]!.headers['idempotency-key']).toBe(stub.requests[0]!.headers['idempotency-key']);
  });

  it('never retries a 409 (or another 4xx): the caller must decide', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    stub.enqueue(apiError(409, 'slot_unavailable', 'The requested start is not an available slot.'));
    await expect(t.client.bookings.create(body)).rejects.toMatchObject({ name: 'ApiError', status: 409, code: 'slot_unavailable', attempts: 1 });
    stub.enqueue(apiError(409, 'idempotency_request_in_progress', 'In progress.', [], { 'retry-after': '1' }));
    await expect(t.client.bookings.create(body)).rejects.toMatchObject({ code: 'idempotency_request_in_progress', retryAfterSeconds: 1 });
    stub.enqueue(apiError(400, 'invalid_request', 'The request is invalid.', [{ field: 'guest.email', issue: 'invalid_format' }]));
    await expect(t.client.bookings.create(body)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(stub.requests).toHaveLength(3);
    expect(t.sleeps).toEqual([]);
  });

  it('gives up after maxRetries (default 3, so 4 attempts) and throws the last ApiError', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    for (let i = 0; i < 4; i++) stub.enqueue(apiError(503, 'calendar_unavailable', 'Unavailable.', [], { 'retry-after': '0' }));
    const err = await t.client.bookings.create(body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, code: 'calendar_unavailable', attempts: 4 });
    expect(stub.requests).toHaveLength(4);
  });

  it('maxRetries 0 sends once; a Retry-After longer than maxRetryDelayMs is returned to the caller at once', async () => {
    const t = await clientWithStub({ maxRetries: 0 });
    stub = t.stub;
    stub.enqueue(apiError(502, 'upstream_unavailable', 'A service is temporarily unavailable.', [], { 'retry-after': '1' }));
    await expect(t.client.bookings.get(booking.id)).rejects.toMatchObject({ code: 'upstream_unavailable', attempts: 1 });
    const t2 = await clientWithStub({ maxRetryDelayMs: 5000 });
    try {
      t2.stub.enqueue(apiError(429, 'rate_limited', 'Too many requests.', [], { 'retry-after': '60' }));
      await expect(t2.client.bookings.get(booking.id)).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60, attempts: 1 });
      expect(t2.sleeps).toEqual([]);
    } finally {
      await t2.stub.close();
    }
  });

  it('throws a NetworkError naming the cause when nothing listens, after its retries', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    const sleeps: number[] = [];
    const client = new SchedulingClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: API_KEY, sleep: async (ms) => void sleeps.push(ms) });
    const err = await client.bookings.get(booking.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ attempts: 4, timedOut: false });
    expect((err as Error).message).toMatch(/GET \/v1\/bookings\/bkg_\S+ failed: ECONNREFUSED \(after 4 attempts\)/);
    expect((err as Error).message).not.toContain(API_KEY);
    expect(sleeps).toHaveLength(3);
  });

  it('times an attempt out (NetworkError timedOut) and does not retry when the caller aborts', async () => {
    const t = await clientWithStub({ timeoutMs: 100, maxRetries: 1 });
    stub = t.stub;
    const controller = new AbortController();
    stub.handle(() => {
      if (stub.requests.length === 3) controller.abort(); // the third request is the one the caller abandons
      return new Promise((resolve) => setTimeout(() => resolve(ok(booking)), 500));
    });
    await expect(t.client.bookings.get(booking.id)).rejects.toMatchObject({ name: 'NetworkError', timedOut: true, attempts: 2 });
    await expect(t.client.bookings.get(booking.id, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(stub.requests).toHaveLength(3);
    expect(t.sleeps).toHaveLength(1);
  });
});
