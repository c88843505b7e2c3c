import { randomBytes } from 'node:crypto';
import { newId } from '@sched/contracts';
import { createDb, type Db } from '@sched/db';
import { rotateSealedValues, sealedKeyId, secretBoxFromEnv, type SecretBox } from '@sched/secrets';
import { createTestDatabase, type TestDatabase, startFakeGoogle, type FakeGoogle, startFakeMicrosoft, type FakeMicrosoft } from '@sched/testing';
import { type CalendarAccess, type ProviderName } from '../../src/domain/calendar-provider';
import { accessFor, connectionUpdatedEvent, passwordAad, tokenAad } from '../../src/domain/connection-status';
import type { Connection, TokenRows } from '../../src/domain/ports';
import { GoogleOAuth } from '../../src/providers/google/oauth';
import { createHttpsTransport, type HttpsTransport } from '../../src/providers/microsoft/https-transport';
import { MicrosoftOAuth } from '../../src/providers/microsoft/oauth';
import { ConnectionTokenStore, type TokenEndpoint } from '../../src/providers/oauth/token-store';
import { createStore } from '../../src/store/create-store';
import { SEALED_COLUMNS } from '../../src/store/sealed-columns';
import { createTokenRows } from '../../src/store/token.queries';
import { providerFailure } from '../support/provider-failure';

/**
 * The token store (AccessTokenSource of the Google and Microsoft adapters) on the real Postgres, against
 * the fakes' token endpoints. Two ConnectionTokenStore instances on two pools are two replicas.
 */

const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');

let db: TestDatabase;
let dbA: Db;
let dbB: Db;
let google: FakeGoogle;
let microsoft: FakeMicrosoft;
let transport: HttpsTransport;
let googleOAuth: GoogleOAuth;
let microsoftOAuth: MicrosoftOAuth;
const sealer: SecretBox = secretBoxFromEnv({ SECRETS_KEYS: `k1:${K1}` });
const ws = newId('wsp');

beforeAll(async () => {
  [db, google, microsoft] = await Promise.all([createTestDatabase({ services: ['calendar-sync'] }), startFakeGoogle(), startFakeMicrosoft()]);
  dbA = createDb(db.pool('calendar-sync'));
  // The second replica has a pool of its own.
  const { createPool } = await import('@sched/db');
  const poolB = createPool(db.urlFor('calendar-sync'), { max: 3, logger: { error: () => undefined } });
  dbB = createDb(poolB);
  afterAllPools.push(() => poolB.end());
  googleOAuth = new GoogleOAuth({ clientId: google.clientId, clientSecret: google.clientSecret, endpoints: google.endpoints, timeoutMs: 2000 });
  transport = createHttpsTransport({ ca: microsoft.ca });
  microsoftOAuth = new MicrosoftOAuth({ clientId: microsoft.clientId, clientSecret: microsoft.clientSecret, authority: microsoft.authority, knownAuthorities: [microsoft.host], timeoutMs: 3000, transport });
});
const afterAllPools: Array<() => Promise<void>> = [];
afterAll(async () => {
  transport?.close();
  await Promise.all([google?.close(), microsoft?.close(), ...afterAllPools.map((f) => f())]);
  await db?.drop();
});

/** A connection saved through the store, its password (the refresh token) sealed as connectCalendar does. */
async function connection(provider: ProviderName, refreshToken: string, box: SecretBox = sealer): Promise<Connection> {
  const hostId = newId('hst');
  const { connection: conn } = await createStore(dbA).saveConnection(
    {
      id: newId('cal'),
      workspaceId: ws,
      hostId,
      provider,
      url: provider === 'google' ? 'https://www.googleapis.com/' : microsoft.url,
      username: 'host@example.com',
      passwordSealed: box.seal(refreshToken, passwordAad(ws, hostId)),
      calendarUrl: 'primary',
      hostTimezone: 'UTC',
      conferencingUrlTemplate: null,
    },
    connectionUpdatedEvent({ workspaceId: ws, hostId }, 'connected', null),
  );
  return conn;
}

/** A replica's token store; `rows` may be wrapped to watch the lock. */
function replica(opts: { db?: Db; box?: SecretBox; now?: () => number; endpoints?: Partial<Record<ProviderName, TokenEndpoint>>; rows?: TokenRows } = {}) {
  const d = opts.db ?? dbA;
  return new ConnectionTokenStore({
    rows: opts.rows ?? createTokenRows(d),
    sealer: opts.box ?? sealer,
    store: createStore(d),
    endpoints: opts.endpoints ?? { google: googleOAuth, microsoft: microsoftOAuth },
    now: opts.now,
  });
}


/** The stored access token of a connection expires `seconds` from now (as an hour after its refresh would). */
async function expireIn(connectionId: string, seconds: number): Promise<void> {
  const res = await db.adminPool.query(`UPDATE calendar_sync.connection_tokens SET access_token_expires_at = now() + make_interval(secs => $2) WHERE connection_id = $1`, [connectionId, seconds]);
  expect(res.rowCount).toBe(1);
}

/**
 * Replicas set up to race: each one's token endpoint waits before calling the real one (so every replica
 * is past its unlocked read before the first refresh commits), and every taking of the row lock is counted.
 */
function racing(real: Partial<Record<ProviderName, TokenEndpoint>>) {
  let holders = 0;
  const slow: Partial<Record<ProviderName, TokenEndpoint>> = {};
  for (const [provider, endpoint] of Object.entries(real) as Array<[ProviderName, TokenEndpoint]>) {
    slow[provider] = {
      async refresh(rt, signal) {
        await new Promise((r) => setTimeout(r, 300));
        return endpoint.refresh(rt, signal);
      },
    };
  }
  const replicaOn = (d: Db) => {
    const rows = createTokenRows(d);
    return replica({ db: d, endpoints: slow, rows: { read: rows.read, whileLocked: (c, ms, fn) => (holders++, rows.whileLocked(c, ms, fn)) } });
  };
  return { replicaOn, lockHolders: () => holders };
}

async function tokenRow(connectionId: string): Promise<Record<string, any>> {
  const res = await db.adminPool.query('SELECT * FROM calendar_sync.connection_tokens WHERE connection_id = $1', [connectionId]);
  return res.rows[0];
}

/** The Calendar API accepts the token (the fake checks it). */
async function works(token: string): Promise<boolean> {
  const res = await fetch(`${google.rootUrl}calendar/v3/calendars/primary/events?maxResults=1`, { headers: { authorization: `Bearer ${token}` } });
  return res.status === 200;
}

describe('ConnectionTokenStore (Google)', () => {
  it('reuses a stored token while it is valid: one token-endpoint call for many reads, on every replica', async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    const before = google.count('token');
    const a = replica();
    const tokens = [];
    for (let i = 0; i < 5; i++) tokens.push(await a.accessToken(access));
    // Another replica reads it from the database.
    tokens.push(await replica({ db: dbB }).accessToken(access));
    expect(google.count('token') - before).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(await works(tokens[0]!)).toBe(true);
  });

  it('refreshes a token within the margin of its expiry, and stores the new one', async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    const first = await replica().accessToken(access);
    const before = google.count('token');
    // 4 minutes before the expiry Google gave (3599 s): inside the 5-minute margin.
    const later = replica({ now: () => Date.now() + (3599 - 240) * 1000 });
    const second = await later.accessToken(access);
    expect(google.count('token') - before).toBe(1);
    expect(second).not.toBe(first);
    expect(await works(second)).toBe(true);
    const row = await tokenRow(conn.id);
    expect(sealer.open(row.access_token_sealed, tokenAad(ws, conn.hostId))).toBe(second);
    // Replicas at the real time use it.
    expect(await replica({ db: dbB }).accessToken(access)).toBe(second);
    expect(google.count('token') - before).toBe(1);
  });

  it('two replicas needing a token at once: one token-endpoint call, the second waits for the lock and uses the first one\'s token', async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    let endpointCalls = 0;
    let lockHolders = 0;
    // A slow token endpoint, so both replicas are past their unlocked read before the first commits.
    const slow: TokenEndpoint = {
      async refresh(rt, signal) {
        endpointCalls++;
        await new Promise((r) => setTimeout(r, 300));
        return googleOAuth.refresh(rt, signal);
      },
    };
    const watched = (d: Db): TokenRows => {
      const rows = createTokenRows(d);
      return { read: rows.read, whileLocked: (c, ms, fn) => (lockHolders++, rows.whileLocked(c, ms, fn)) };
    };
    const a = replica({ db: dbA, rows: watched(dbA), endpoints: { google: slow } });
    const b = replica({ db: dbB, rows: watched(dbB), endpoints: { google: slow } });
    const before = google.count('token');
    const [ta, tb] = await Promise.all([a.accessToken(access), b.accessToken(access)]);
    expect(lockHolders).toBe(2);
    expect(endpointCalls).toBe(1);
    expect(google.count('token') - before).toBe(1);
    expect(ta).toBe(tb);
  });

  it('a stored token about to expire, needed by three replicas at once: one refresh request reaches the token endpoint, all three use its token', async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    const old = await replica().accessToken(access);
    // 60 s left: inside every replica's 5-minute margin, so each one decides to refresh.
    await expireIn(conn.id, 60);
    const { replicaOn, lockHolders } = racing({ google: googleOAuth });
    const before = google.count('token');
    const replicas = [replicaOn(dbA), replicaOn(dbB), replicaOn(dbB)];
    const tokens = await Promise.all(replicas.map((r) => r.accessToken(access)));
    // All three got past their own read of the expiring token and asked for the row lock.
    expect(lockHolders()).toBe(3);
    expect(google.count('token') - before).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(old);
    expect(await works(tokens[0]!)).toBe(true);
    const row = await tokenRow(conn.id);
    expect(sealer.open(row.access_token_sealed, tokenAad(ws, conn.hostId))).toBe(tokens[0]);
    expect(row.access_token_expires_at.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
  });

  it('two replicas meeting a 401 with the same token at once: one refresh request reaches the token endpoint', async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    const old = await replica().accessToken(access);
    const { replicaOn, lockHolders } = racing({ google: googleOAuth });
    const before = google.count('token');
    const [ta, tb] = await Promise.all([replicaOn(dbA).refreshed(access, old), replicaOn(dbB).refreshed(access, old)]);
    expect(lockHolders()).toBe(2);
    expect(google.count('token') - before).toBe(1);
    expect(ta).toBe(tb);
    expect(ta).not.toBe(old);
    expect(await works(ta)).toBe(true);
  });

  it("refreshed() after a 401: another replica's newer token is used without a call; else one forced refresh", async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const access = accessFor(conn, sealer);
    const a = replica();
    const b = replica({ db: dbB });
    const old = await a.accessToken(access);
    expect(await b.accessToken(access)).toBe(old);
    let before = google.count('token');
    // Replica B meets a 401 first: the stored token is the one refused, so it refreshes (under the lock).
    const newer = await b.refreshed(access, old);
    expect(newer).not.toBe(old);
    expect(google.count('token') - before).toBe(1);
    // Replica A meets a 401 with the old token too: B's token is in the database.
    before = google.count('token');
    expect(await a.refreshed(access, old)).toBe(newer);
    expect(google.count('token') - before).toBe(0);
    // And A keeps using it.
    expect(await a.accessToken(access)).toBe(newer);
  });

  it('a revoked grant: reauthorization_required, the connection goes to reauthorization_required (auth_failed) with calendar.connection_updated (error)', async () => {
    const refreshToken = google.issueRefreshToken();
    const conn = await connection('google', refreshToken);
    google.revokeRefreshToken(refreshToken);
    const err = await providerFailure(replica().accessToken(accessFor(conn, sealer)));
    expect(err.kind).toBe('reauthorization_required');
    expect(err.message).not.toContain(refreshToken);
    const row = await db.adminPool.query('SELECT status, error_code FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id]);
    expect(row.rows[0]).toEqual({ status: 'reauthorization_required', error_code: 'auth_failed' });
    const events = await db.adminPool.query(
      `SELECT payload FROM calendar_sync.outbox WHERE type = 'calendar.connection_updated' AND payload->'data'->>'host_id' = $1 ORDER BY created_at`,
      [conn.hostId],
    );
    expect(events.rows.map((r) => r.payload.data)).toEqual([
      { host_id: conn.hostId, status: 'connected', error_code: null },
      { host_id: conn.hostId, status: 'error', error_code: 'auth_failed' },
    ]);
  });

  it('tokens are sealed at rest: no column holds the access or the refresh token', async () => {
    const refreshToken = google.issueRefreshToken();
    const conn = await connection('google', refreshToken);
    const token = await replica().accessToken(accessFor(conn, sealer));
    const row = await tokenRow(conn.id);
    const text = JSON.stringify(row);
    expect(text).not.toContain(token);
    expect(text).not.toContain(refreshToken);
    expect(row.access_token_sealed).toMatch(/^v1\.k1\./);
    expect(sealer.open(row.access_token_sealed, tokenAad(ws, conn.hostId))).toBe(token);
    // Not interchangeable with the password: another associated data.
    expect(() => sealer.open(row.access_token_sealed, passwordAad(ws, conn.hostId))).toThrow();
    const dump = await db.adminPool.query(`SELECT c::text AS t FROM calendar_sync.calendar_connections c WHERE id = $1`, [conn.id]);
    expect(dump.rows[0].t).not.toContain(token);
    expect(dump.rows[0].t).not.toContain(refreshToken);
  });

  it("a replaced connection drops the previous grant's tokens; a caller still holding the old grant is not given the new one's", async () => {
    const conn = await connection('google', google.issueRefreshToken());
    const oldAccess = accessFor(conn, sealer);
    await replica().accessToken(oldAccess);
    expect((await tokenRow(conn.id)).access_token_sealed).not.toBeNull();
    const newRefresh = google.issueRefreshToken();
    await createStore(dbA).saveConnection({ ...conn, passwordSealed: sealer.seal(newRefresh, passwordAad(ws, conn.hostId)) }, connectionUpdatedEvent(conn, 'connected', null));
    expect(await tokenRow(conn.id)).toBeUndefined();
    // A caller still holding the old grant (an operation that started before the replace) gets no token.
    const err = await providerFailure(replica().accessToken(oldAccess));
    expect(err.kind).toBe('unavailable');
    const fresh = await replica().accessToken({ ...oldAccess, password: newRefresh });
    expect(await works(fresh)).toBe(true);
  });

  it('credentials being verified (no stored connection yet) are refreshed directly, nothing stored', async () => {
    const access: CalendarAccess = { provider: 'google', url: 'https://www.googleapis.com/', username: 'x', password: google.issueRefreshToken(), calendarUrl: 'primary' };
    const before = await db.adminPool.query('SELECT count(*)::int AS n FROM calendar_sync.connection_tokens');
    expect(await works(await replica().accessToken(access))).toBe(true);
    const after = await db.adminPool.query('SELECT count(*)::int AS n FROM calendar_sync.connection_tokens');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});

describe('ConnectionTokenStore (Microsoft: rotated refresh tokens)', () => {
  it('stores the refresh token the endpoint rotated in (sealed) and refreshes with it from then on', async () => {
    const original = microsoft.issueRefreshToken();
    const conn = await connection('microsoft', original);
    const access = accessFor(conn, sealer);
    const a = replica();
    const first = await a.accessToken(access);
    const row = await tokenRow(conn.id);
    expect(row.refresh_token_sealed).toMatch(/^v1\.k1\./);
    const rotated = sealer.open(row.refresh_token_sealed, tokenAad(ws, conn.hostId));
    expect(rotated).not.toBe(original);
    expect(JSON.stringify(row)).not.toContain(rotated);
    // The original grant's token no longer works: the next refresh must use the rotated one.
    microsoft.revokeRefreshToken(original);
    const second = await replica({ db: dbB }).refreshed(access, first);
    expect(second).not.toBe(first);
    // The connection's password (and so its identity for the domain's checks) is unchanged.
    const c = await db.adminPool.query('SELECT password_sealed, status FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id]);
    expect(c.rows[0]).toEqual({ password_sealed: conn.passwordSealed, status: 'connected' });
  });
});

describe('ConnectionTokenStore (Microsoft: replicas racing on an expiring token)', () => {
  it('one refresh request reaches the token endpoint; the refresh token it rotated in is stored once and used by all', async () => {
    const conn = await connection('microsoft', microsoft.issueRefreshToken());
    const access = accessFor(conn, sealer);
    await replica().accessToken(access);
    const rotatedBefore = sealer.open((await tokenRow(conn.id)).refresh_token_sealed, tokenAad(ws, conn.hostId));
    await expireIn(conn.id, 30);
    const { replicaOn, lockHolders } = racing({ microsoft: microsoftOAuth });
    const tokenCalls = () => microsoft.calls.filter((c) => c.kind === 'token').length;
    const before = tokenCalls();
    const tokens = await Promise.all([replicaOn(dbA).accessToken(access), replicaOn(dbB).accessToken(access)]);
    expect(lockHolders()).toBe(2);
    expect(tokenCalls() - before).toBe(1);
    expect(tokens[0]).toBe(tokens[1]);
    const row = await tokenRow(conn.id);
    const rotated = sealer.open(row.refresh_token_sealed, tokenAad(ws, conn.hostId));
    expect(rotated).not.toBe(rotatedBefore);
    // The refresh was made with the previously rotated token: revoking it now changes nothing, the new one works.
    microsoft.revokeRefreshToken(rotatedBefore);
    await expect(replica().refreshed(access, tokens[0]!)).resolves.toEqual(expect.any(String));
  });
});

describe('secrets rotation', () => {
  it('re-seals the token columns under the new key; a replica with only the new key uses the stored token', async () => {
    const old = secretBoxFromEnv({ SECRETS_KEYS: `k1:${K1}` });
    const conn = await connection('microsoft', microsoft.issueRefreshToken(), old);
    const token = await replica({ box: old }).accessToken(accessFor(conn, old));
    const both = secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2},k1:${K1}` });
    const report = await rotateSealedValues(db.pool('calendar-sync'), both, SEALED_COLUMNS);
    for (const column of ['access_token_sealed', 'refresh_token_sealed']) {
      const col = report.columns.find((c) => c.table === 'calendar_sync.connection_tokens' && c.column === column)!;
      expect(col.total).toBeGreaterThan(0);
      expect(col.current).toBe(col.total);
    }
    const row = await tokenRow(conn.id);
    expect(sealedKeyId(row.access_token_sealed)).toBe('k2');
    expect(sealedKeyId(row.refresh_token_sealed)).toBe('k2');
    const onlyNew = secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2}` });
    const calls = microsoft.calls.filter((c) => c.kind === 'token').length;
    const refreshed = await db.adminPool.query('SELECT password_sealed FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id]);
    const access = accessFor({ ...conn, passwordSealed: refreshed.rows[0].password_sealed }, onlyNew);
    expect(await replica({ box: onlyNew }).accessToken(access)).toBe(token);
    expect(microsoft.calls.filter((c) => c.kind === 'token').length).toBe(calls);
  });
});
