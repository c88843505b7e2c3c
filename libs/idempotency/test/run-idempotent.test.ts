import { randomBytes } from 'node:crypto';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { DomainError, newId } from '@sched/contracts';
import { createSecretBox } from '@sched/secrets';
import { pruneTable, startRetentionJob } from '@sched/db';
import {
  findLiveAnswer,
  idempotencyRowIdentity,
  idempotencyRetentionRule,
  requestFingerprint,
  runIdempotent,
  type IdempotencyScope,
  type RunIdempotentOptions,
  type StoredResponse,
} from '../src';
import { effects, keys, startHarness, type Harness } from './helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const scope = (over: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
  workspaceId: 'wsp_test',
  apiKeyId: 'key_a',
  method: 'POST',
  path: '/v1/bookings',
  ...over,
});
const freshKey = () => `key-${randomBytes(6).toString('hex')}`;

/** A mutation that inserts one effect row and answers 201 with it, as a service's create would. */
function creating(note: string, counter?: { runs: number }): RunIdempotentOptions<typeof h.db>['execute'] {
  return async (tx) => {
    if (counter) counter.runs += 1;
    const id = newId('bkg');
    await tx.insert(effects).values({ id, note });
    return { status: 201, body: { data: { id, note, nested: { b: 1, a: [1, 'x'] } }, meta: { request_id: 'req_first' } } };
  };
}

function run(over: Partial<RunIdempotentOptions<typeof h.db>> & { body?: unknown } = {}) {
  const s = over.scope ?? scope();
  return runIdempotent({
    db: h.db,
    table: keys,
    scope: s,
    key: over.key,
    fingerprint: over.fingerprint ?? requestFingerprint(s.method, s.path, over.body ?? { a: 1 }),
    requestId: over.requestId ?? `req_${randomBytes(4).toString('hex')}`,
    execute: over.execute ?? creating('x'),
    secretBox: over.secretBox,
    retentionMs: over.retentionMs,
  });
}

describe('runIdempotent', () => {
  it('has a test table with exactly the columns of idempotencyTable (so these tests exercise the real shape)', async () => {
    const { rows } = await h.pool.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'idem_test' AND table_name = 'idempotency_keys' ORDER BY column_name`,
    );
    const expected = getTableConfig(keys).columns.map((c) => c.name).sort();
    expect(rows.map((r) => r.column_name)).toEqual(expected);
  });

  it('without a key runs the mutation every time and stores nothing', async () => {
    const before = await h.effectCount();
    const a = await run({ key: undefined });
    const b = await run({ key: undefined });
    expect([a.replayed, b.replayed]).toEqual([false, false]);
    expect(await h.effectCount()).toBe(before + 2);
  });

  it('replays the exact stored status and body with only meta.request_id replaced, and marks it Idempotent-Replayed', async () => {
    const key = freshKey();
    const counter = { runs: 0 };
    const first = await run({ key, execute: creating('once', counter), requestId: 'req_first' });
    const before = await h.effectCount();
    const again = await run({ key, execute: creating('once', counter), requestId: 'req_second' });
    expect(counter.runs).toBe(1);
    expect(await h.effectCount()).toBe(before);
    expect(first).toMatchObject({ status: 201, replayed: false, headers: {} });
    expect(again.status).toBe(201);
    expect(again.replayed).toBe(true);
    expect(again.headers).toEqual({ 'Idempotent-Replayed': 'true' });
    expect(again.body).toEqual({ ...(first.body as object), meta: { request_id: 'req_second' } });
    // Key order of the stored body survives the round trip.
    expect(JSON.stringify((again.body as { data: unknown }).data)).toBe(JSON.stringify((first.body as { data: unknown }).data));
  });

  it('answers 422 idempotency_key_reused when the same key comes with another body, and runs nothing', async () => {
    const key = freshKey();
    await run({ key, body: { a: 1 } });
    const counter = { runs: 0 };
    await expect(run({ key, body: { a: 2 }, execute: creating('other', counter) })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect(counter.runs).toBe(0);
  });

  it('treats the same body with keys in another order as the same request (canonical JSON fingerprint)', async () => {
    const key = freshKey();
    await run({ key, body: { a: 1, b: { c: 2, d: 3 } } });
    const again = await run({ key, body: { b: { d: 3, c: 2 }, a: 1 } });
    expect(again.replayed).toBe(true);
  });

  it('scopes a key to workspace, API key, method and path: the same key elsewhere is a new request', async () => {
    const key = freshKey();
    await run({ key });
    for (const other of [scope({ workspaceId: 'wsp_other' }), scope({ apiKeyId: 'key_b' }), scope({ path: '/v1/bookings/bkg_1/cancel' })]) {
      const res = await run({ key, scope: other });
      expect(res.replayed).toBe(false);
    }
  });

  it('answers 409 idempotency_request_in_progress with Retry-After 1 at once while the first request still executes', async () => {
    const key = freshKey();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const first = run({
      key,
      execute: async (tx) => {
        started();
        await gate;
        return creating('slow')(tx);
      },
    });
    await running;
    const t0 = Date.now();
    const err = await run({ key }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'idempotency_request_in_progress', retryAfterSeconds: 1 });
    expect(Date.now() - t0).toBeLessThan(1000); // it did not wait for the first one
    release();
    await first;
    expect((await run({ key })).replayed).toBe(true);
  });

  it('does not store a 5xx: everything rolls back, the key is released and a retry runs afresh', async () => {
    const key = freshKey();
    const before = await h.effectCount();
    const failing: RunIdempotentOptions<typeof h.db>['execute'] = async (tx) => {
      await creating('doomed')(tx);
      throw new Error('database went away');
    };
    await expect(run({ key, execute: failing })).rejects.toThrow('database went away');
    const unavailable: RunIdempotentOptions<typeof h.db>['execute'] = async (tx) => {
      await creating('doomed')(tx);
      throw new DomainError('calendar_unavailable', { retryAfterSeconds: 5 });
    };
    await expect(run({ key, execute: unavailable })).rejects.toMatchObject({ code: 'calendar_unavailable' });
    await expect(run({ key, execute: async () => Promise.reject(new DomainError('rate_limited')) })).rejects.toMatchObject({ code: 'rate_limited' });
    expect(await h.effectCount()).toBe(before);
    const retry = await run({ key });
    expect(retry).toMatchObject({ status: 201, replayed: false });
    expect(await h.effectCount()).toBe(before + 1);
  });

  it('stores a 4xx thrown as a DomainError: its partial writes roll back to the savepoint, the error answer is replayed', async () => {
    const key = freshKey();
    const before = await h.effectCount();
    const conflicting: RunIdempotentOptions<typeof h.db>['execute'] = async (tx) => {
      await creating('partial')(tx);
      throw new DomainError('slot_unavailable');
    };
    const first = await run({ key, execute: conflicting, requestId: 'req_a' });
    expect(first).toMatchObject({ status: 409, replayed: false });
    expect(first.body).toEqual({ error: { code: 'slot_unavailable', message: expect.any(String), details: [] }, meta: { request_id: 'req_a' } });
    expect(await h.effectCount()).toBe(before);
    const counter = { runs: 0 };
    const again = await run({ key, execute: creating('second', counter), requestId: 'req_b' });
    expect(counter.runs).toBe(0);
    expect(again).toMatchObject({ status: 409, replayed: true });
    expect(again.body).toEqual({ ...(first.body as object), meta: { request_id: 'req_b' } });
  });

  it('with savepoint: false stores a 4xx thrown before any write, and still commits a successful mutation with its key', async () => {
    const key = freshKey();
    const refused = await runIdempotent({
      db: h.db,
      table: keys,
      scope: scope(),
      key,
      fingerprint: 'fp',
      requestId: 'req_1',
      savepoint: false,
      execute: () => Promise.reject(new DomainError('invalid_reference')),
    });
    expect(refused).toMatchObject({ status: 422, replayed: false });
    const before = await h.effectCount();
    const ok = await runIdempotent({ db: h.db, table: keys, scope: scope(), key: freshKey(), fingerprint: 'fp', requestId: 'r', savepoint: false, execute: creating('fast') });
    expect(ok.status).toBe(201);
    expect(await h.effectCount()).toBe(before + 1);
  });

  it('commits the key row and the mutation in one transaction: when the key row cannot be written, the mutation is gone too', async () => {
    await h.pool.query(`
      CREATE FUNCTION idem_test.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON idem_test.idempotency_keys FOR EACH ROW
        WHEN (NEW.workspace_id = 'wsp_boom') EXECUTE FUNCTION idem_test.refuse();`);
    const before = await h.effectCount();
    await expect(run({ key: freshKey(), scope: scope({ workspaceId: 'wsp_boom' }) })).rejects.toThrow();
    expect(await h.effectCount()).toBe(before);
  });

  it('keeps a row 24 hours by default, ignores it once expired, and the cleanup deletes only expired rows', async () => {
    const key = freshKey();
    await run({ key, scope: scope({ workspaceId: 'wsp_retention' }) });
    const { rows } = await h.pool.query(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS secs FROM idem_test.idempotency_keys WHERE workspace_id = 'wsp_retention'`,
    );
    expect(rows).toEqual([{ secs: 24 * 3600 }]);

    await h.pool.query(`UPDATE idem_test.idempotency_keys SET expires_at = now() - interval '1 second' WHERE workspace_id = 'wsp_retention'`);
    // Expired but not yet cleaned up: the key is free again, and the new answer replaces the old row.
    const rerun = await run({ key, scope: scope({ workspaceId: 'wsp_retention' }) });
    expect(rerun.replayed).toBe(false);

    await h.pool.query(`UPDATE idem_test.idempotency_keys SET expires_at = now() - interval '1 second' WHERE workspace_id = 'wsp_retention'`);
    const live = (await h.pool.query(`SELECT count(*)::int AS n FROM idem_test.idempotency_keys WHERE expires_at > now()`)).rows[0].n;
    const deleted = await pruneTable(h.db, idempotencyRetentionRule(keys), { batchSize: 1 });
    expect(deleted).toEqual({ idempotency_keys: 1 });
    const left = await h.pool.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE expires_at <= now())::int AS expired FROM idem_test.idempotency_keys`);
    expect(left.rows[0]).toEqual({ n: live, expired: 0 });
  });

  it('the retention job deletes expired rows on demand and stops cleanly', async () => {
    await run({ key: freshKey(), scope: scope({ workspaceId: 'wsp_timer' }) });
    await h.pool.query(`UPDATE idem_test.idempotency_keys SET expires_at = now() - interval '1 hour' WHERE workspace_id = 'wsp_timer'`);
    const logs: string[] = [];
    const cleanup = startRetentionJob({
      db: h.db,
      rules: [idempotencyRetentionRule(keys)],
      intervalMs: 3_600_000,
      logger: { warn: (m) => logs.push(m), info: (m) => logs.push(m) },
    });
    expect(await cleanup.runOnce()).toEqual({ idempotency_keys: 1 });
    await cleanup.stop();
    expect(logs).toEqual(['retention pruned rows']);
    expect((await h.pool.query(`SELECT count(*)::int AS n FROM idem_test.idempotency_keys WHERE workspace_id = 'wsp_timer'`)).rows[0].n).toBe(0);
  });

  it('seals a stored answer that carries a secret: not readable at rest, replayed intact, bound to its own row', async () => {
    const box = createSecretBox({ key: randomBytes(32).toString('base64') });
    const secretUrl = `https://book.example.com/i/${randomBytes(16).toString('base64url')}`;
    const key = freshKey();
    const invitation: RunIdempotentOptions<typeof h.db>['execute'] = async (): Promise<StoredResponse> => ({
      status: 201,
      body: { data: { id: 'biv_1', invitation_url: secretUrl }, meta: { request_id: 'req_1' } },
    });
    await run({ key, scope: scope({ workspaceId: 'wsp_sealed' }), execute: invitation, secretBox: box });
    const stored = (await h.pool.query(`SELECT response_body, sealed FROM idem_test.idempotency_keys WHERE workspace_id = 'wsp_sealed'`)).rows[0];
    expect(stored.sealed).toBe(true);
    expect(stored.response_body).not.toContain(secretUrl.split('/i/')[1]);
    expect(stored.response_body).not.toContain('invitation_url');

    const replay = await run({ key, scope: scope({ workspaceId: 'wsp_sealed' }), execute: invitation, secretBox: box, requestId: 'req_2' });
    expect(replay.replayed).toBe(true);
    expect(replay.body).toEqual({ data: { id: 'biv_1', invitation_url: secretUrl }, meta: { request_id: 'req_2' } });
    // Without the box the sealed answer cannot be replayed (nor silently served as ciphertext).
    await expect(run({ key, scope: scope({ workspaceId: 'wsp_sealed' }), execute: invitation })).rejects.toThrow(/SecretBox/);
    // A sealed body copied onto another key's row fails authentication (the row id is the associated data).
    const otherKey = freshKey();
    await run({ key: otherKey, scope: scope({ workspaceId: 'wsp_sealed' }), execute: invitation, secretBox: box });
    await h.pool.query(
      `UPDATE idem_test.idempotency_keys SET response_body = $1 WHERE workspace_id = 'wsp_sealed' AND response_body <> $1`,
      [stored.response_body],
    );
    await expect(run({ key: otherKey, scope: scope({ workspaceId: 'wsp_sealed' }), execute: invitation, secretBox: box })).rejects.toThrow(/authentication/);
  });
});

describe('findLiveAnswer (idempotency_peek: a look at the finished answer without the lock)', () => {
  it('finds the live row of a finished request in its workspace only, and none once it expired', async () => {
    const key = freshKey();
    const s = scope({ workspaceId: 'wsp_peek' });
    const { id } = idempotencyRowIdentity(keys, s, key);
    expect(await findLiveAnswer(h.db, keys, 'wsp_peek', id)).toBeNull();
    const first = await run({ key, scope: s });
    const found = await findLiveAnswer(h.db, keys, 'wsp_peek', id);
    expect(found).toEqual({ status: 201, body: JSON.stringify(first.body), fingerprint: requestFingerprint('POST', '/v1/bookings', { a: 1 }), sealed: false });
    expect(await findLiveAnswer(h.db, keys, 'wsp_other', id)).toBeNull();
    await h.pool.query(`UPDATE idem_test.idempotency_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expect(await findLiveAnswer(h.db, keys, 'wsp_peek', id)).toBeNull();
  });
});
