import { newId } from '@sched/contracts';
import { createDb, createPool } from '@sched/db';
import type { Pool, PoolClient } from 'pg';
import { createTestDatabase, waitFor, type TestDatabase } from '@sched/testing';
import { attemptRecords, recordAttempts, type AttemptRecord, type Transition } from '../src/store/attempt-records.queries';
import { toClaimed, type ClaimedDelivery } from '../src/store/delivery-worker.queries';
import { eventIngest, type IngestClaimsPort } from '../src/store/ingest-batch.queries';
import { insertEventsDeliveries, type IngestEvent } from '../src/store/ingest.queries';

/**
 * The ingest and record statements carry several events or attempts at once (group commit,
 * store/ingest-batch.queries.ts and store/attempt-records.queries.ts). What batching must not change
 * (docs/webhook-dispatch.md "Design"; decisions.md §11): each delivery is written, claimed, moved and
 * numbered as its own statement would have done it; a statement that dies mid-batch wrote none of its
 * items, and their redelivery (the messages were not acknowledged) or the lease's expiry (the
 * attempts were not recorded) writes each once; an item that cannot be written fails alone.
 */

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  pool = createPool(db.urlFor('webhook-dispatch'), { max: 6, applicationName: 'batched-statements-test', logger: { error: () => undefined } });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Endpoints of a new workspace, wanting booking.created, their ids in the given (sorted) order. */
async function endpoints(names: string[]): Promise<{ ws: string; ids: string[] }> {
  const ws = newId('wsp');
  const suffix = newId('whe').slice(4, 16);
  const ids = names.map((n) => `whe_${n}${suffix}`);
  for (const id of ids) {
    await db.adminPool.query(
      `INSERT INTO webhook_dispatch.endpoints (id, workspace_id, url, events, secret_sealed) VALUES ($1, $2, 'http://127.0.0.1:9/hooks', '{booking.created}', 'sealed')`,
      [id, ws],
    );
  }
  return { ws, ids };
}

const event = (ws: string, body = '{"n":1}'): IngestEvent => ({ workspaceId: ws, eventId: newId('wev'), eventType: 'booking.created', body });

async function rowsOf(eventIds: string[]): Promise<Array<{ event_id: string; endpoint_id: string; claim_token: string | null }>> {
  const res = await db.adminPool.query(
    'SELECT event_id, endpoint_id, claim_token FROM webhook_dispatch.deliveries WHERE event_id = ANY($1) ORDER BY event_id, endpoint_id',
    [eventIds],
  );
  return res.rows;
}

async function inboxOf(eventIds: string[]): Promise<string[]> {
  const res = await db.adminPool.query('SELECT event_id FROM webhook_dispatch.inbox WHERE event_id = ANY($1) ORDER BY event_id', [eventIds]);
  return res.rows.map((r) => r.event_id);
}

/** Runs `statement` on a connection of its own and kills that connection while the statement waits on `blocker`'s lock. */
async function killedMidStatement(statement: (c: PoolClient) => Promise<unknown>): Promise<unknown> {
  const victim = await pool.connect();
  const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const running = statement(victim).then(
    () => undefined,
    (err: unknown) => err,
  );
  // Waiting on the blocker's lock, in the middle of its work.
  await waitFor(
    async () => (await db.adminPool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid])).rowCount === 1,
    { timeoutMs: 5000 },
  );
  await db.adminPool.query('SELECT pg_terminate_backend($1)', [pid]);
  const err = await running;
  victim.release(true);
  return err;
}

/** Claim tickets as the worker hands them out, recording what each statement claimed and whether it committed. */
function fakeClaims(): IngestClaimsPort & { tickets: Array<{ token: string; room: number; taken: string[]; committed?: boolean }> } {
  const tickets: Array<{ token: string; room: number; taken: string[]; committed?: boolean }> = [];
  return {
    tickets,
    open(maxRows) {
      const t = { token: `test-replica:${tickets.length + 1}`, room: maxRows, taken: [] as string[], committed: undefined as boolean | undefined };
      tickets.push(t);
      return {
        token: t.token,
        room: t.room,
        perEndpoint: 16,
        leaseMs: 60_000,
        take: (claimed) => t.taken.push(...claimed.map((d) => d.id)),
        settle: (committed) => (t.committed = committed),
      };
    },
  };
}

describe('the ingest statement with several events', () => {
  it('writes each event as its own statement would: per endpoint the oldest events claim up to its cap, the room goes to the events in order', async () => {
    const claimedBy = (out: Awaited<ReturnType<typeof insertEventsDeliveries>>) =>
      out.map((i) =>
        i.deliveries
          .filter((d) => d.claimed)
          .map((d) => d.delivery.endpointId)
          .sort(),
      );
    // Cap 2 per endpoint, room for all: the first two events claim, the other two are left to the worker.
    const capped = await endpoints(['a', 'b']);
    const [a, b] = capped.ids as [string, string];
    const events = [event(capped.ws), event(capped.ws), event(capped.ws), event(capped.ws)];
    const out = await insertEventsDeliveries(pool, events, { token: 'test-replica:1', room: 16, perEndpoint: 2, leaseMs: 60_000 });
    expect(out.map((i) => i.fresh)).toEqual([true, true, true, true]);
    expect(claimedBy(out)).toEqual([[a, b], [a, b], [], []]);
    expect(out.every((i) => i.deliveries.length === 2)).toBe(true);
    for (const [n, i] of out.entries()) {
      for (const d of i.deliveries) expect(d.delivery).toMatchObject({ eventId: events[n]!.eventId, body: events[n]!.body, attemptCount: 0, roundAttempts: 0 });
    }
    const stored = await rowsOf(events.map((e) => e.eventId));
    expect(stored).toHaveLength(8);
    expect(stored.filter((r) => r.claim_token === 'test-replica:1')).toHaveLength(4);

    // Room for 3: the first event's two, then the second event's first endpoint.
    const roomy = await endpoints(['a', 'b']);
    const [ra, rb] = roomy.ids as [string, string];
    const room3 = await insertEventsDeliveries(pool, [event(roomy.ws), event(roomy.ws), event(roomy.ws)], { token: 'test-replica:1', room: 3, perEndpoint: 16, leaseMs: 60_000 });
    expect(claimedBy(room3)).toEqual([[ra, rb], [ra], []]);
  });

  it('claims nothing for an endpoint with an older delivery waiting unclaimed, nor beyond the leases it already has', async () => {
    const { ws, ids } = await endpoints(['a', 'b']);
    const [a, b] = ids as [string, string];
    const first = await insertEventsDeliveries(pool, [event(ws)], { token: 'other-replica:1', room: 1, perEndpoint: 16, leaseMs: 60_000 });
    // a's delivery was claimed (leased), b's was left waiting for the worker.
    expect(first[0]!.deliveries.find((d) => d.claimed)?.delivery.endpointId).toBe(a);
    const out = await insertEventsDeliveries(pool, [event(ws), event(ws)], { token: 'test-replica:2', room: 10, perEndpoint: 2, leaseMs: 60_000 });
    // a holds one lease of its 2: one more, for the older event; b has an older delivery waiting: none.
    expect(out.map((i) => i.deliveries.filter((d) => d.claimed).map((d) => d.delivery.endpointId))).toEqual([[a], []]);
    expect(out.flatMap((i) => i.deliveries).filter((d) => d.delivery.endpointId === b && d.claimed)).toEqual([]);
  });

  it('a statement that dies mid-batch writes none of its events; the redelivered batch writes each once, a second redelivery nothing', async () => {
    const { ws } = await endpoints(['a', 'b']);
    const events = [event(ws), event(ws), event(ws), event(ws)];
    const ids = events.map((e) => e.eventId);
    // Another transaction holds the third event's inbox row: the statement waits there, its first two
    // events already inserted (uncommitted), and is killed.
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`INSERT INTO webhook_dispatch.inbox (event_id, type) VALUES ($1, 'booking.created')`, [ids[2]]);
      const err = await killedMidStatement((c) => insertEventsDeliveries(c, events, { token: 'dead-replica:1', room: 8, perEndpoint: 16, leaseMs: 60_000 }));
      expect(err).toBeInstanceOf(Error);
      await blocker.query('ROLLBACK');
    } finally {
      blocker.release();
    }
    expect(await inboxOf(ids)).toEqual([]);
    expect(await rowsOf(ids)).toEqual([]);

    // The messages were not acknowledged: they come back, and this time the statement commits.
    const again = await insertEventsDeliveries(pool, events, { token: 'test-replica:3', room: 8, perEndpoint: 16, leaseMs: 60_000 });
    expect(again.map((i) => [i.fresh, i.deliveries.length])).toEqual(events.map(() => [true, 2]));
    // Committed, but (say) the replica died before acknowledging: every message comes back once more.
    const twice = await insertEventsDeliveries(pool, [...events, event(ws)], { token: 'test-replica:4', room: 8, perEndpoint: 16, leaseMs: 60_000 });
    expect(twice.map((i) => [i.fresh, i.deliveries.length])).toEqual([...events.map(() => [false, 0]), [true, 2]]);
    expect(await inboxOf(ids)).toEqual([...ids].sort());
    const stored = await rowsOf(ids);
    expect(stored).toHaveLength(8);
    expect(new Set(stored.map((r) => `${r.event_id}/${r.endpoint_id}`)).size).toBe(8);
  });

  it('shares a statement among the events arriving while one runs, and an event that cannot be written fails alone', async () => {
    const { ws } = await endpoints(['a']);
    const claims = fakeClaims();
    const ingest = eventIngest({ pool, claims });
    // No timer: the first goes at once, alone; the others wait for it and go together. A NUL in a body
    // is refused by Postgres: that event's batch fails and is run again event by event.
    const bad = event(ws, '{"n":"\u0000"}');
    const good = [event(ws), event(ws), event(ws)];
    const results = await Promise.allSettled([good[0]!, good[1]!, bad, good[2]!].map((e) => ingest.ingest(e)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // [e1], [e2, bad, e3] failed, then e2, bad, e3 alone.
    expect(ingest.stats()).toMatchObject({ batches: 5, items: 4 });
    expect(claims.tickets.map((t) => [t.room, t.committed])).toEqual([
      [4, true],
      [12, false],
      [4, true],
      [4, false],
      [4, true],
    ]);
    expect(claims.tickets[1]!.taken).toEqual([]);
    // Every delivery written was claimed by the ticket of the statement that committed it, once.
    const stored = await rowsOf(good.map((e) => e.eventId));
    expect(stored).toHaveLength(3);
    expect(claims.tickets.flatMap((t) => t.taken).sort()).toEqual(
      (await db.adminPool.query('SELECT id FROM webhook_dispatch.deliveries WHERE event_id = ANY($1) ORDER BY id', [good.map((e) => e.eventId)])).rows.map(
        (r) => r.id,
      ),
    );
    expect(stored.map((r) => r.claim_token).sort()).toEqual(['test-replica:1', 'test-replica:3', 'test-replica:5']);
    expect(await inboxOf([bad.eventId])).toEqual([]);
  });

  it('never puts a message and its redelivered copy in one statement: the copy finds the inbox row and writes nothing', async () => {
    const { ws } = await endpoints(['a']);
    const claims = fakeClaims();
    const ingest = eventIngest({ pool, claims });
    const [e0, e1, e2] = [event(ws), event(ws), event(ws)];
    const out = await Promise.all([e0, e1, { ...e1 }, e2].map((e) => ingest.ingest(e)));
    expect(out.map((i) => i.fresh)).toEqual([true, true, false, true]);
    expect(out[2]!.deliveries).toEqual([]);
    expect(await rowsOf([e1.eventId])).toHaveLength(1);
    const taken = claims.tickets.flatMap((t) => t.taken);
    expect(new Set(taken).size).toBe(taken.length);
    expect(taken).toHaveLength(3);
  });
});

describe('the record statement with several attempts', () => {
  /** Deliveries leased to `token`, one per entry of `statuses`, each to its own endpoint. */
  async function leased(token: string, statuses: Array<'pending' | 'failed'>, attemptCount = 2): Promise<ClaimedDelivery[]> {
    const { ws, ids } = await endpoints(statuses.map((_s, n) => String.fromCharCode(97 + n)));
    const out: ClaimedDelivery[] = [];
    for (const [n, status] of statuses.entries()) {
      const id = newId('whd');
      await db.adminPool.query(
        `INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, status, attempt_count, round_attempts,
           next_attempt_at, locked_until, claim_token, failed_at, last_error)
         VALUES ($1, $2, $3, $4, 'booking.created', '{}', $5, $6, $6, now(), now() + interval '1 minute', $7,
           CASE WHEN $5 = 'failed' THEN now() END, CASE WHEN $5 = 'failed' THEN 'endpoint_disabled' END)`,
        [id, ws, ids[n], newId('wev'), status, attemptCount, token],
      );
      const row = await db.adminPool.query(
        `SELECT d.*, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at
         FROM webhook_dispatch.deliveries d JOIN webhook_dispatch.endpoints e ON e.id = d.endpoint_id WHERE d.id = $1`,
        [id],
      );
      out.push(toClaimed(row.rows[0]));
    }
    return out;
  }

  const attempt = (statusCode: number | null, latencyMs = 12): AttemptRecord => ({
    attemptedAt: new Date('2026-11-26T10:00:00.123Z'),
    statusCode,
    latencyMs,
    errorKind: statusCode === 200 ? null : statusCode === null ? 'timeout' : 'http_status',
    error: statusCode === 200 ? null : statusCode === null ? 'no response within 10000 ms' : `HTTP ${statusCode}`,
  });

  /** What the delivery and its attempts look like, without ids and clock times. */
  async function stateOf(d: ClaimedDelivery) {
    const row = (
      await db.adminPool.query(
        `SELECT status, attempt_count, round_attempts, claim_token, locked_until IS NOT NULL AS leased, last_status_code, last_error,
           succeeded_at IS NOT NULL AS succeeded, failed_at IS NOT NULL AS failed, dead_letter_count, dead_letter_pending,
           CASE WHEN next_attempt_at IS NULL THEN NULL ELSE round(extract(epoch FROM next_attempt_at - now()))::int END AS next_in_s
         FROM webhook_dispatch.deliveries WHERE id = $1`,
        [d.id],
      )
    ).rows[0];
    const attempts = (
      await db.adminPool.query(
        'SELECT number, attempted_at, status_code, latency_ms, error_kind, error FROM webhook_dispatch.attempts WHERE delivery_id = $1 ORDER BY number',
        [d.id],
      )
    ).rows;
    return { ...row, claim_token: row.claim_token === null ? null : 'held', attempts };
  }

  const transitions: Array<{ status: 'pending' | 'failed'; a: AttemptRecord; next: Exclude<Transition, { kind: 'gone' }>; token?: string }> = [
    { status: 'pending', a: attempt(200), next: { kind: 'succeeded' } },
    { status: 'pending', a: attempt(503), next: { kind: 'retry', delayMs: 120_000 } },
    { status: 'pending', a: attempt(null), next: { kind: 'failed' } },
    // Failed meanwhile (its endpoint was disabled) while the attempt was in flight: the success is the truth.
    { status: 'failed', a: attempt(200), next: { kind: 'succeeded' } },
    // Its lease expired and another replica claimed it: not moved, the attempt recorded all the same.
    { status: 'pending', a: attempt(500), next: { kind: 'retry', delayMs: 5000 }, token: 'someone-else:1' },
  ];

  it('moves each delivery exactly as a statement of its own does, and numbers each attempt from the claimed count', async () => {
    const together = await leased('test-replica:1', transitions.map((t) => t.status));
    const alone = await leased('test-replica:2', transitions.map((t) => t.status));
    const batch = await recordAttempts(
      pool,
      transitions.map((t, n) => ({ d: together[n]!, token: t.token ?? 'test-replica:1', a: t.a, next: t.next })),
    );
    const one: Array<{ moved: boolean; more: boolean }> = [];
    for (const [n, t] of transitions.entries()) one.push(...(await recordAttempts(pool, [{ d: alone[n]!, token: t.token ?? 'test-replica:2', a: t.a, next: t.next }])));
    expect(batch.map((r) => r.moved)).toEqual([true, true, true, true, false]);
    expect(one).toEqual(batch);
    for (const n of transitions.keys()) expect(await stateOf(together[n]!)).toEqual(await stateOf(alone[n]!));
    expect(await stateOf(together[0]!)).toMatchObject({ status: 'succeeded', attempt_count: 3, round_attempts: 3, claim_token: null, leased: false, next_in_s: null });
    expect(await stateOf(together[1]!)).toMatchObject({ status: 'pending', attempt_count: 3, claim_token: null, leased: false, next_in_s: 120 });
    expect(await stateOf(together[2]!)).toMatchObject({ status: 'failed', failed: true, dead_letter_count: 1, dead_letter_pending: true, next_in_s: null });
    expect(await stateOf(together[3]!)).toMatchObject({ status: 'succeeded', succeeded: true, failed: false, last_status_code: 200 });
    expect(await stateOf(together[4]!)).toMatchObject({ status: 'pending', attempt_count: 2, claim_token: 'held', leased: true });
    for (const d of together) expect((await stateOf(d)).attempts.map((a: { number: number }) => a.number)).toEqual([3]);
  });

  it('a record statement that dies mid-batch records none of its attempts: the deliveries keep their lease (to be sent again when it expires)', async () => {
    const ds = await leased('test-replica:3', ['pending', 'pending', 'pending']);
    const items = ds.map((d) => ({ d, token: 'test-replica:3', a: attempt(200), next: { kind: 'succeeded' } as const }));
    const before = await Promise.all(ds.map(stateOf));
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM webhook_dispatch.deliveries WHERE id = $1 FOR UPDATE', [ds[2]!.id]);
      const err = await killedMidStatement((c) => recordAttempts(c as unknown as Pool, items));
      expect(err).toBeInstanceOf(Error);
      await blocker.query('ROLLBACK');
    } finally {
      blocker.release();
    }
    expect(await Promise.all(ds.map(stateOf))).toEqual(before);
    expect(before.every((s) => s.leased && s.attempts.length === 0)).toBe(true);
    // Recorded once the statement can run: each attempt once.
    expect((await recordAttempts(pool, items)).map((r) => r.moved)).toEqual([true, true, true]);
    for (const d of ds) expect((await stateOf(d)).attempts).toHaveLength(1);
  });

  it('shares a statement among the attempts ending while one is recorded, and one that cannot be recorded fails alone', async () => {
    const ds = await leased('test-replica:4', ['pending', 'pending', 'pending', 'pending']);
    const records = attemptRecords({ pool, db: createDb(pool) });
    // A latency beyond Postgres' int: the statement carrying it fails, and is run again attempt by attempt.
    const latencies = [10, 11, 2 ** 40, 13];
    const results = await Promise.allSettled(ds.map((d, n) => records.record(d, 'test-replica:4', attempt(200, latencies[n]), { kind: 'succeeded' })));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(records.stats()).toMatchObject({ batches: 5, items: 4 });
    const states = await Promise.all(ds.map(stateOf));
    expect(states.map((s) => [s.status, s.attempts.length])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['pending', 0],
      ['succeeded', 1],
    ]);
    // Not recorded: still leased, so it is sent again once the lease expires.
    expect(states[2]).toMatchObject({ leased: true, claim_token: 'held' });
  });
});
