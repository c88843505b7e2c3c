import { makeBooking } from '../../contracts/test/fixtures';
import { ApiError, BROWSER_REFUSAL, SchedulingClient, isApiError } from '../src';
import { API_KEY, clientWithStub } from './support/harness';
import { apiError, type StubServer } from './support/stub-server';

let stub: StubServer | undefined;
afterEach(async () => {
  const s = stub;
  stub = undefined;
  await s?.close();
  expect(s?.mismatches ?? []).toEqual([]);
});

describe('typed errors', () => {
  it('an error envelope becomes an ApiError with code, status, message, details and the request id', async () => {
    const t = await clientWithStub();
    stub = t.stub;
    const b = makeBooking();
    stub.enqueue(apiError(409, 'version_conflict', 'The expected version does not match the current version.', [{ field: 'expected_version', issue: 'current_version_3' }]));
    const err = await t.client.bookings.reschedule(b.id, { start_at: b.start_at, expected_version: 1 }).catch((e: unknown) => e);
    expect(isApiError(err)).toBe(true);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect({ name: e.name, code: e.code, status: e.status, message: e.message, details: e.details, attempts: e.attempts, retryAfterSeconds: e.retryAfterSeconds }).toEqual({
      name: 'ApiError',
      code: 'version_conflict',
      status: 409,
      message: 'The expected version does not match the current version.',
      details: [{ field: 'expected_version', issue: 'current_version_3' }],
      attempts: 1,
      retryAfterSeconds: null,
    });
    expect(e.requestId).toBe(stub.requests.length === 1 ? 'req_stub_1' : null);
  });

  it('an answer that is not the envelope (a proxy page) is ApiError unexpected_response with the status', async () => {
    const t = await clientWithStub({ maxRetries: 0 });
    stub = t.stub;
    stub.enqueue({ status: 404, headers: { 'content-type': 'text/html' }, body: '<html>Not here</html>' });
    await expect(t.client.bookings.get('bkg_x')).rejects.toMatchObject({ code: 'unexpected_response', status: 404, requestId: 'req_stub_1' });
    // This answer breaks the contract on purpose (the stub's check says so); nothing else to check.
    expect(stub.mismatches).toEqual([expect.stringContaining('body: must be object')]);
    stub.mismatches.length = 0;
  });
});

describe('server-side only', () => {
  const g = globalThis as { window?: unknown; document?: unknown };
  afterEach(() => {
    delete g.window;
    delete g.document;
  });

  it('refuses to be constructed where a browser global `window` exists, quoting api-v1.md Authentication rule 3', () => {
    g.window = {};
    expect(() => new SchedulingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY })).toThrow(BROWSER_REFUSAL);
    expect(BROWSER_REFUSAL).toContain('A key must never appear in browser code. A browser must not call the API with a key');
  });

  it('refuses where `document` exists too, and works once neither does', () => {
    g.document = {};
    expect(() => new SchedulingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY })).toThrow(/server-side only/);
    delete g.document;
    expect(() => new SchedulingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY })).not.toThrow();
  });

  it('refuses a missing key and a base URL that is not http(s)', () => {
    expect(() => new SchedulingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: '' })).toThrow(/apiKey is required/);
    expect(() => new SchedulingClient({ baseUrl: 'localhost:8080', apiKey: API_KEY })).toThrow(/http or https/);
    expect(() => new SchedulingClient({ baseUrl: 'not a url', apiKey: API_KEY })).toThrow(/absolute http\(s\) URL/);
  });
});
