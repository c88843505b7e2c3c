import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { secretBoxFromEnv } from '@sched/secrets';
import { waitFor } from '@sched/testing';
import { ROOT, startSystem, type System } from '../support/system';
import { freeStarts, setUpTenant, startReceiver, type Tenant } from '../support/tenant';

/**
 * Issue 15: secrets key rotation with the whole system running as processes. Values sealed under k1
 * (a calendar password, a webhook signing secret and the one before it, stored invitation answers)
 * are re-sealed under k2 by `pnpm admin secrets rotate` after the services restart with the ring
 * `k2,k1`; everything reads back, and still does once k1 has left the ring. Issue 19: an OAuth
 * connection's access token and rotated refresh token (calendar_sync.connection_tokens) are re-sealed
 * too, and so is a started connect flow's PKCE verifier (calendar_sync.oauth_states): both stored
 * here for the connected host as calendar-sync seals them (the system runs no OAuth provider).
 */
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const SEALING = ['calendar-sync', 'invitation', 'webhook-dispatch'] as const;

let sys: System;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: Tenant;

beforeAll(async () => {
  sys = await startSystem({ env: { SECRETS_KEYS: `k1:${K1}`, CALENDAR_WRITE_RETRY_DELAYS_MS: '200,500,1000', WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,1000,1000,1000,1000' } });
  receiver = await startReceiver();
  t = await setUpTenant(sys, receiver);
}, 240000);

afterAll(async () => {
  await receiver?.close();
  await sys?.stop();
});

async function admin(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sys.gatewayUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** POST /v1/booking-invitations under an Idempotency-Key: its stored answer (with the URL) is sealed. */
async function createInvitation(eventTypeId: string, key: string): Promise<{ status: number; replayed: string | null; url: string }> {
  const res = await fetch(`${sys.gatewayUrl}/v1/booking-invitations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ event_type_id: eventTypeId, expires_at: '2099-01-01T00:00:00Z', max_uses: 1 }),
  });
  const json = (await res.json()) as any;
  if (res.status !== 201) throw new Error(`invitation → ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), url: json.data.invitation_url };
}

/** Every sealed value stored in any schema, as `<table>.<column>` → key ids. */
async function storedKeyIds(): Promise<Record<string, string[]>> {
  const q = async (sql: string) => (await sys.db.adminPool.query<{ v: string }>(sql)).rows.map((r) => r.v.split('.')[1]!);
  return {
    'calendar_sync.calendar_connections.password_sealed': await q('SELECT password_sealed AS v FROM calendar_sync.calendar_connections'),
    'calendar_sync.connection_tokens.access_token_sealed': await q('SELECT access_token_sealed AS v FROM calendar_sync.connection_tokens'),
    'calendar_sync.connection_tokens.refresh_token_sealed': await q('SELECT refresh_token_sealed AS v FROM calendar_sync.connection_tokens'),
    'calendar_sync.oauth_states.verifier_sealed': await q('SELECT verifier_sealed AS v FROM calendar_sync.oauth_states'),
    'webhook_dispatch.endpoints.secret_sealed': await q('SELECT secret_sealed AS v FROM webhook_dispatch.endpoints'),
    'webhook_dispatch.endpoints.previous_secret_sealed': await q('SELECT previous_secret_sealed AS v FROM webhook_dispatch.endpoints WHERE previous_secret_sealed IS NOT NULL'),
    'invitation.idempotency_keys.response_body': await q('SELECT response_body AS v FROM invitation.idempotency_keys WHERE sealed'),
  };
}

/** The associated data calendar-sync seals a connection's OAuth tokens with (domain/connection-status.ts tokenAad). */
const tokenAad = (ws: string, host: string) => `calendar_sync.connection_token:${ws}:${host}`;
const ACCESS_TOKEN = `ya29.${randomBytes(16).toString('hex')}`;
const REFRESH_TOKEN = `1//${randomBytes(16).toString('hex')}`;

/** Token state for the tenant's connection, sealed under k1 as the token store would. */
async function storeTokens(): Promise<void> {
  const box = secretBoxFromEnv({ SECRETS_KEYS: `k1:${K1}` });
  const aad = tokenAad(t.workspaceId, t.hostId);
  await sys.db.adminPool.query(
    `INSERT INTO calendar_sync.connection_tokens (connection_id, workspace_id, host_id, access_token_sealed, access_token_expires_at, refresh_token_sealed)
     SELECT id, workspace_id, host_id, $3, now() + interval '1 hour', $4 FROM calendar_sync.calendar_connections WHERE workspace_id = $1 AND host_id = $2`,
    [t.workspaceId, t.hostId, box.seal(ACCESS_TOKEN, aad), box.seal(REFRESH_TOKEN, aad)],
  );
}

/** The associated data of a started OAuth connect flow's PKCE verifier (domain/connection-status.ts oauthStateAad). */
const oauthStateAad = (ws: string, host: string) => `calendar_sync.oauth_state:${ws}:${host}`;
const VERIFIER = randomBytes(32).toString('base64url');

/** A connect flow started for the tenant's host (its state row), its verifier sealed under k1 as calendar-sync seals it. */
async function storeOAuthState(): Promise<void> {
  const box = secretBoxFromEnv({ SECRETS_KEYS: `k1:${K1}` });
  await sys.db.adminPool.query(
    `INSERT INTO calendar_sync.oauth_states (state_hash, workspace_id, host_id, provider, verifier_sealed, expires_at)
     VALUES ($1, $2, $3, 'google', $4, now() + interval '10 minutes')`,
    [randomBytes(32).toString('hex'), t.workspaceId, t.hostId, box.seal(VERIFIER, oauthStateAad(t.workspaceId, t.hostId))],
  );
}

/** The stored tokens open under `keys` with their associated data. */
async function tokensOpen(keys: string): Promise<string[]> {
  const box = secretBoxFromEnv({ SECRETS_KEYS: keys });
  const { rows } = await sys.db.adminPool.query('SELECT access_token_sealed, refresh_token_sealed FROM calendar_sync.connection_tokens WHERE host_id = $1', [t.hostId]);
  const aad = tokenAad(t.workspaceId, t.hostId);
  return [box.open(rows[0].access_token_sealed, aad), box.open(rows[0].refresh_token_sealed, aad)];
}

async function reconfigure(keys: string): Promise<void> {
  for (const service of SEALING) {
    await sys.kill(service);
    await sys.restart(service, { SECRETS_KEYS: keys });
  }
}

/** `pnpm admin …` as an operator runs it, against the gateway. */
function adminCli(...argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
  const child = spawn(tsx, [path.join(ROOT, 'libs/admin-cli/src/main.ts'), ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ADMIN_URL: sys.gatewayUrl, ADMIN_TOKEN: sys.adminToken },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Everything sealed still reads back: a new Booking's webhook verifies with the endpoint's secret
 * (webhook-dispatch opened it), its calendar event is written to Radicale (calendar-sync opened the
 * password and authenticated), and a replayed invitation create returns the same URL (invitation
 * opened its stored answer).
 */
async function everythingReadsBack(start: string, invitations: Array<{ key: string; url: string }>, eventTypeId: string): Promise<void> {
  const booking = await t.client.bookings.create({ event_type_id: t.eventTypeId, start_at: start, guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'UTC' } });
  await waitFor(() => receiver.received.some((w) => w.bookingId === booking.id && w.type === 'booking.created'), { timeoutMs: 20000 });
  const synced = await waitFor(async () => {
    const b = await t.client.bookings.get(booking.id);
    return b.calendar.status === 'synced' || b.calendar.status === 'failed' ? b : null;
  }, { timeoutMs: 30000, intervalMs: 200 });
  expect(synced.calendar).toEqual({ status: 'synced', error_code: null });
  expect((await sys.radicale.listObjects(t.calendarUser, t.calendarName)).some((f) => f.includes(booking.id))).toBe(true);
  await waitFor(() => receiver.received.some((w) => w.bookingId === booking.id && w.type === 'calendar.created'), { timeoutMs: 20000 });
  for (const inv of invitations) {
    const replay = await createInvitation(eventTypeId, inv.key);
    expect(replay).toEqual({ status: 201, replayed: 'true', url: inv.url });
  }
}

describe('rotating the secrets key with the system running', () => {
  it('re-seals every stored secret under k2, reads everything back, and keeps working once k1 is removed', async () => {
    const starts = await freeStarts(t, 20);
    // A rotated webhook secret: its previous one (sealed too) keeps signing during the overlap.
    const [endpoint] = await admin('GET', `/admin/v1/workspaces/${t.workspaceId}/webhook-endpoints`);
    receiver.secret.value = (await admin('POST', `/admin/v1/workspaces/${t.workspaceId}/webhook-endpoints/${endpoint.id}/rotate-secret`)).secret;
    // Stored invitation answers (sealed: they carry the URL).
    const vip = await admin('POST', `/admin/v1/workspaces/${t.workspaceId}/event-types`, { host_id: t.hostId, name: 'VIP', slug: 'vip', duration_minutes: 30, meeting_type: 'video', access: 'invitation_only' });
    const invitations: Array<{ key: string; url: string }> = [];
    for (let i = 0; i < 3; i++) {
      const key = `rotation-${i}-${randomBytes(6).toString('hex')}`;
      invitations.push({ key, url: (await createInvitation(vip.id, key)).url });
    }
    await storeTokens();
    await storeOAuthState();
    expect(await storedKeyIds()).toEqual({
      'calendar_sync.calendar_connections.password_sealed': ['k1'],
      'calendar_sync.connection_tokens.access_token_sealed': ['k1'],
      'calendar_sync.connection_tokens.refresh_token_sealed': ['k1'],
      'calendar_sync.oauth_states.verifier_sealed': ['k1'],
      'webhook_dispatch.endpoints.secret_sealed': ['k1'],
      'webhook_dispatch.endpoints.previous_secret_sealed': ['k1'],
      'invitation.idempotency_keys.response_body': ['k1', 'k1', 'k1'],
    });

    // 1. The new key first in the ring, the old one still in it; every sealing service restarted.
    await reconfigure(`k2:${K2},k1:${K1}`);
    const before = await adminCli('secrets', 'status');
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/^invitation\s+k2\s+invitation\.idempotency_keys\.response_body\s+3\s+0\s+k1=3$/m);

    // 2. A rotation interrupted after its first batch (one row of three) …
    const partial = await admin('POST', '/admin/v1/secrets/invitation/rotate', { batch_size: 1, max_batches: 1 });
    expect(partial).toMatchObject({ finished: false, columns: [{ total: 3, current: 1, rotated: 1 }] });

    // … then `pnpm admin secrets rotate` finishes everything, while Bookings keep being made.
    const [cli, duringRotation] = await Promise.all([
      adminCli('secrets', 'rotate'),
      t.client.bookings.create({ event_type_id: t.eventTypeId, start_at: starts[0]!, guest: { name: 'Grace', email: 'grace@example.com', timezone: 'UTC' } }),
    ]);
    expect(cli.stderr).not.toMatch(/error/);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toContain(
      'rotating calendar-sync to k2: calendar_sync.calendar_connections.password_sealed 1/1, calendar_sync.connection_tokens.access_token_sealed 1/1, calendar_sync.connection_tokens.refresh_token_sealed 1/1, calendar_sync.oauth_states.verifier_sealed 1/1',
    );
    expect(cli.stderr).toContain('rotating invitation to k2: invitation.idempotency_keys.response_body 3/3');
    expect(cli.stderr).toContain('rotating webhook-dispatch to k2: webhook_dispatch.endpoints.secret_sealed 1/1, webhook_dispatch.endpoints.previous_secret_sealed 1/1');
    expect(cli.stdout).toMatch(/^invitation\s+invitation\.idempotency_keys\.response_body\s+2\s+3\/3\s+k2=3$/m); // the interrupted run did the third
    expect(await storedKeyIds()).toEqual({
      'calendar_sync.calendar_connections.password_sealed': ['k2'],
      'calendar_sync.connection_tokens.access_token_sealed': ['k2'],
      'calendar_sync.connection_tokens.refresh_token_sealed': ['k2'],
      'calendar_sync.oauth_states.verifier_sealed': ['k2'],
      'webhook_dispatch.endpoints.secret_sealed': ['k2'],
      'webhook_dispatch.endpoints.previous_secret_sealed': ['k2'],
      'invitation.idempotency_keys.response_body': ['k2', 'k2', 'k2'],
    });
    await waitFor(async () => (await t.client.bookings.get(duringRotation.id)).calendar.status === 'synced', { timeoutMs: 30000, intervalMs: 200 });
    await everythingReadsBack(starts[2]!, invitations, vip.id);

    // 3. k1 removed from the ring: everything still reads.
    await reconfigure(`k2:${K2}`);
    await everythingReadsBack(starts[4]!, invitations, vip.id);
    expect(await tokensOpen(`k2:${K2}`)).toEqual([ACCESS_TOKEN, REFRESH_TOKEN]);
    const [state] = (await sys.db.adminPool.query('SELECT verifier_sealed FROM calendar_sync.oauth_states WHERE host_id = $1', [t.hostId])).rows;
    expect(secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2}` }).open(state.verifier_sealed, oauthStateAad(t.workspaceId, t.hostId))).toBe(VERIFIER);
    const after = await adminCli('--json', 'secrets', 'status');
    expect(JSON.parse(after.stdout).flatMap((r: any) => r.columns.map((c: any) => Object.keys(c.by_key_id)))).toEqual([['k2'], ['k2'], ['k2'], ['k2'], ['k2'], ['k2'], ['k2']]);

    // A value still under the removed key (e.g. restored from an old backup) is named, with its key id.
    const row = (await sys.db.adminPool.query<{ id: string; response_body: string }>('SELECT id, response_body FROM invitation.idempotency_keys WHERE sealed LIMIT 1')).rows[0]!;
    await sys.db.adminPool.query('UPDATE invitation.idempotency_keys SET response_body = $2 WHERE id = $1', [row.id, `v1.k1.${row.response_body.split('.').slice(2).join('.')}`]);
    const stale = await adminCli('secrets', 'rotate', '--service', 'invitation');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`invitation.idempotency_keys.response_body row ${row.id}: sealed value uses key id "k1", which is not in SECRETS_KEYS (the ring has "k2")`);
    for (const secret of [K1, K2, receiver.secret.value, ACCESS_TOKEN, REFRESH_TOKEN, ...invitations.map((i) => i.url)]) expect(`${stale.stdout}${stale.stderr}${cli.stdout}${cli.stderr}`).not.toContain(secret);
  });
});
