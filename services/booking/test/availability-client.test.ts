import { PassThrough } from 'node:stream';
import { DomainError, type SlotCheckResponse } from '@sched/contracts';
import { createCredentialSigner, parseInternalKeyRing, runWithRequestContext, type OnBehalfOf } from '@sched/http';
import { createLogger, runWithContext } from '@sched/logger';
import { claimsOf, logEntries, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { createSlotChecker } from '../src/http/availability.client';
import { bookable, EVENT_TYPE_ID, refusing, startAvailabilityStub, type AvailabilityStub, type StubBehaviour } from './support/availability-stub';

/**
 * The SlotChecker adapter (src/http/availability.client.ts) against a real HTTP stub of availability:
 * concurrent checks of one workspace and principal share one slot-checks call; every check still gets
 * what the single call gave it, failures included.
 */

const WS = 'wsp_AAAAAAAAAAAAAAAAAAAAAA';
const KEY_A: Omit<OnBehalfOf, 'requestId'> = { principal: 'api_key', workspaceId: WS, apiKeyId: 'key_AAAAAAAAAAAAAAAAAAAAAA', scopes: ['bookings:write'] };
const KEY_B: Omit<OnBehalfOf, 'requestId'> = { ...KEY_A, apiKeyId: 'key_BBBBBBBBBBBBBBBBBBBBBB' };
const PAGE: Omit<OnBehalfOf, 'requestId'> = { principal: 'booking_page', workspaceId: WS, invitationId: 'biv_AAAAAAAAAAAAAAAAAAAAAA' };

let stub: AvailabilityStub;
let lines: string[];
let checker: ReturnType<typeof createSlotChecker>;
const signer = parseInternalKeyRing(TEST_INTERNAL_AUTH_KEYS).then((ring) => createCredentialSigner({ service: 'booking', ring }));

async function makeChecker(opts: { batchesInFlight?: number; batchMax?: number; timeoutMs?: number } = {}) {
  checker?.close();
  lines = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => lines.push(c.toString()));
  checker = createSlotChecker({
    baseUrl: stub.url,
    timeoutMs: opts.timeoutMs ?? 1000,
    logger: createLogger({ service: 'booking', stream, level: 'info' }),
    signer: await signer,
    batchesInFlight: opts.batchesInFlight ?? 2,
    batchMax: opts.batchMax ?? 32,
  });
}

beforeAll(async () => {
  stub = await startAvailabilityStub();
});
beforeEach(async () => {
  stub.behave(bookable());
  stub.calls.length = 0;
  stub.requests.length = 0;
  await makeChecker();
});
afterAll(async () => {
  checker?.close();
  await stub.close();
});

const START = Date.parse('2031-03-03T09:00:00.000Z');
const startOf = (i: number) => new Date(START + i * 5 * 60_000);

/** A check made inside a request on behalf of `who` (as a create's handler runs), with its own request id. */
function check(who: Omit<OnBehalfOf, 'requestId'>, i: number, req: { excludeBookingId?: string } = {}): Promise<SlotCheckResponse> {
  const requestId = `req_check${String(i).padStart(3, '0')}`;
  return runWithContext({ request_id: requestId }, () =>
    runWithRequestContext({ ...who, requestId }, {}, () => checker.check(who.workspaceId!, { eventTypeId: EVENT_TYPE_ID, startAt: startOf(i), ...req })),
  );
}

/** What each promise came to: its answer, or its DomainError's code, status and Retry-After. */
async function outcomes(ps: Array<Promise<SlotCheckResponse>>): Promise<unknown[]> {
  return Promise.all(
    ps.map((p) =>
      p.then(
        (answer) => (answer.bookable ? answer.start_at : answer.reason),
        (err: unknown) => (err instanceof DomainError ? { code: err.code, status: err.status, retryAfter: err.retryAfterSeconds } : String(err)),
      ),
    ),
  );
}

describe('sharing calls', () => {
  it('sends a check with nothing in flight at once, alone, with its request id', async () => {
    expect((await check(KEY_A, 0)).bookable).toBe(true);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.checks).toEqual([{ workspaceId: WS, body: { event_type_id: EVENT_TYPE_ID, start_at: startOf(0).toISOString() }, requestId: 'req_check000' }]);
  });

  it('32 concurrent checks of one API key: 3 calls (2 alone at once, then the 30 that waited, together), every answer its own, in order', async () => {
    const answers = await outcomes(Array.from({ length: 32 }, (_, i) => check(KEY_A, i)));
    expect(answers).toEqual(Array.from({ length: 32 }, (_, i) => startOf(i).toISOString()));
    expect(stub.requests.map((r) => r.checks.length)).toEqual([1, 1, 30]);
    // Each call carries the credential of its first check; every item its own request id.
    for (const r of stub.requests) {
      const claims = await claimsOf(r.authorization, 'availability');
      expect(claims).toMatchObject({ caller: 'booking', principal: 'api_key', workspaceId: WS, apiKeyId: KEY_A.apiKeyId, scopes: KEY_A.scopes, requestId: r.checks[0]!.requestId });
    }
    expect(stub.calls.map((c) => c.requestId).sort()).toEqual(Array.from({ length: 32 }, (_, i) => `req_check${String(i).padStart(3, '0')}`));
  });

  it('holds a call to SLOT_CHECK_BATCH_MAX checks and SLOT_CHECK_BATCHES_IN_FLIGHT calls per lane', async () => {
    await makeChecker({ batchesInFlight: 1, batchMax: 10 });
    await outcomes(Array.from({ length: 32 }, (_, i) => check(KEY_A, i)));
    expect(stub.requests.map((r) => r.checks.length)).toEqual([1, 10, 10, 10, 1]);
  });

  it('never puts checks of different principals (API keys, the booking page) or workspaces in one call', async () => {
    await makeChecker({ batchesInFlight: 1 });
    const OTHER_WS = { ...KEY_A, workspaceId: 'wsp_BBBBBBBBBBBBBBBBBBBBBB' };
    const whos = [KEY_A, KEY_B, PAGE, OTHER_WS];
    const answers = await outcomes(Array.from({ length: 24 }, (_, i) => check(whos[i % 4]!, i)));
    expect(answers.every((a) => typeof a === 'string' && a.startsWith('2031-'))).toBe(true);
    // Per lane: one alone, then the other five together.
    expect(stub.requests.map((r) => r.checks.length).sort()).toEqual([1, 1, 1, 1, 5, 5, 5, 5]);
    for (const r of stub.requests) {
      const claims = await claimsOf(r.authorization, 'availability');
      const lane = whos.filter((w) => w.workspaceId === claims.workspaceId && w.principal === claims.principal && w.apiKeyId === claims.apiKeyId && w.invitationId === claims.invitationId);
      expect(lane).toHaveLength(1);
      // Every check of the call was asked on behalf of that principal (check i used whos[i % 4]).
      for (const c of r.checks) expect(whos[Number(c.requestId!.slice(-3)) % 4]).toBe(lane[0]);
      expect(r.workspaceId).toBe(claims.workspaceId);
    }
  });
});

describe('answers and failures, per check', () => {
  /** Bookable, except the check at `startOf(failing)`: its calendar cannot be read; and `startOf(gone)`: taken. */
  const mixed =
    (failing: number, gone: number): StubBehaviour =>
    (c) => {
      if (c.body.start_at === startOf(failing).toISOString()) return { status: 503, headers: { 'retry-after': '4' }, body: { error: { code: 'calendar_unavailable', message: 'x', details: [] } } };
      if (c.body.start_at === startOf(gone).toISOString()) return refusing('slot_unavailable')(c);
      return bookable()(c);
    };

  it('an item error fails only its check (503 calendar_unavailable with its Retry-After); the others get their answers', async () => {
    stub.behave(mixed(5, 6));
    const answers = await outcomes(Array.from({ length: 10 }, (_, i) => check(KEY_A, i)));
    expect(stub.requests.length).toBeLessThan(10);
    expect(answers[5]).toEqual({ code: 'calendar_unavailable', status: undefined, retryAfter: 4 });
    expect(answers[6]).toBe('slot_unavailable');
    expect(answers.filter((a) => typeof a === 'string' && a.startsWith('2031-'))).toHaveLength(8);
  });

  const whole: Array<[string, StubBehaviour, unknown]> = [
    ['503 service_unavailable (its store down)', () => ({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'service_unavailable', message: 'x', details: [] } } }), { code: 'service_unavailable', status: undefined, retryAfter: 5 }],
    ['a plain 503', () => ({ status: 503, headers: { 'retry-after': '3' } }), { code: 'calendar_unavailable', status: undefined, retryAfter: 3 }],
    ['a 503 without Retry-After', () => ({ status: 503 }), { code: 'calendar_unavailable', status: undefined, retryAfter: 1 }],
    ['a plain 404', () => ({ status: 404 }), 'not_found'],
    ['a 500', () => ({ status: 500, body: { error: { code: 'internal_error' } } }), { code: 'upstream_unavailable', status: 502, retryAfter: 1 }],
    ['an off-contract body', () => ({ status: 200, body: { data: { bookable: 'maybe' } } }), { code: 'upstream_unavailable', status: 502, retryAfter: 1 }],
    ['a hang-up (after one retry)', () => ({ status: 200, hangUp: true }), { code: 'upstream_unavailable', status: 502, retryAfter: 1 }],
  ];
  it.each(whole)('a call failing as a whole with %s fails each of its checks as the single call did', async (what, behaviour, expected) => {
    stub.behave(behaviour);
    const answers = await outcomes(Array.from({ length: 8 }, (_, i) => check(KEY_A, i)));
    expect(answers).toEqual(Array.from({ length: 8 }, () => expected));
    // Two calls alone, then the six that waited (each call twice after a hang-up).
    expect(stub.requests.map((r) => r.checks.length)).toEqual(what.includes('hang-up') ? [1, 1, 1, 1, 6, 6] : [1, 1, 6]);
  });

  it('retries a call once at once after a hang-up (the whole call, every check in it)', async () => {
    stub.behave(() => ({ status: 200, hangUp: true }));
    await outcomes([check(KEY_A, 0)]);
    expect(stub.requests.map((r) => r.checks.map((c) => c.requestId))).toEqual([['req_check000'], ['req_check000']]);
  });

  it('an answer with another number of entries than checks is off-contract: 502 for each', async () => {
    await makeChecker({ batchesInFlight: 1 });
    let n = 0;
    // The stub answers per check; the second call's answer loses one entry.
    stub.behave((c) => (c.requestId === 'req_check003' && n++ === 0 ? { ...bookable()(c), omitEntry: true } : bookable()(c)));
    const answers = await outcomes(Array.from({ length: 4 }, (_, i) => check(KEY_A, i)));
    expect(answers[0]).toBe(startOf(0).toISOString());
    expect(answers.slice(1)).toEqual(Array.from({ length: 3 }, () => ({ code: 'upstream_unavailable', status: 502, retryAfter: 1 })));
    expect(logEntries(lines).filter((e) => e.message === 'availability slot check answered off-contract')).toHaveLength(3);
  });

  it('times out each check of a slow call with 504, and bounds a check by SLOT_CHECK_TIMEOUT_MS from when it was asked, waiting for its call included', async () => {
    await makeChecker({ batchesInFlight: 1, timeoutMs: 400 });
    stub.behave((c) => ({ ...bookable()(c), delayMs: 300 }));
    const started = Date.now();
    // The first goes alone (answered at 300 ms); the second waits for it, goes at 300 ms and would be answered at 600.
    const [first, second] = await Promise.all([outcomes([check(KEY_A, 0)]), outcomes([check(KEY_A, 1)]).then((o) => [o, Date.now() - started] as const)]);
    expect(first).toEqual([startOf(0).toISOString()]);
    expect(second[0]).toEqual([{ code: 'upstream_unavailable', status: 504, retryAfter: 1 }]);
    expect(second[1]).toBeLessThan(580);
    stub.behave((c) => ({ ...bookable()(c), delayMs: 600 }));
    expect(await outcomes([check(KEY_A, 2), check(KEY_A, 3)])).toEqual(Array.from({ length: 2 }, () => ({ code: 'upstream_unavailable', status: 504, retryAfter: 1 })));
  });

  it('logs a failure once per check, in that check\'s own request (its request id), not the call\'s', async () => {
    stub.behave(() => ({ status: 200, hangUp: true }));
    await outcomes(Array.from({ length: 5 }, (_, i) => check(KEY_A, i)));
    const warned = logEntries(lines).filter((e) => e.message === 'availability slot check failed; failing closed');
    expect(warned.map((e) => [e.request_id, e.kind]).sort()).toEqual(Array.from({ length: 5 }, (_, i) => [`req_check${String(i).padStart(3, '0')}`, 'unreachable']));
  });
});
