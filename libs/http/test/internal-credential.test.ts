import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { SignJWT } from 'jose';
import {
  apiKeyWith,
  calledBy,
  createCredentialSigner,
  createCredentialVerifier,
  CredentialRefused,
  parseInternalKeyRing,
  requestContext,
  requireWorkspace,
  sendData,
  OPERATOR_ONLY,
  type AccessTable,
  type OnBehalfOf,
} from '../src';
import { testApp } from './test-app';

const ring = (kid = 'k1') => `${kid}:${randomBytes(32).toString('base64')}`;
const K1 = ring('k1');
const K2 = ring('k2');

const apiKey: OnBehalfOf = { principal: 'api_key', workspaceId: 'wsp_a', apiKeyId: 'key_a', scopes: ['bookings:read'], requestId: 'req_cred1' };

async function bearer(keys: string, audience: string, who: OnBehalfOf, opts: { caller?: string; ttlSeconds?: number } = {}) {
  const signer = createCredentialSigner({ service: opts.caller ?? 'gateway', ring: await parseInternalKeyRing(keys), ttlSeconds: opts.ttlSeconds });
  return `Bearer ${await signer.sign(audience, who)}`;
}

const ACCESS: AccessTable = {
  'GET /v1/things': apiKeyWith('bookings:read'),
  'GET /v1/things/:id': apiKeyWith('bookings:write'),
  'GET /internal/v1/workspaces/:ws/things': calledBy(['booking']),
  'POST /admin/v1/workspaces/:ws/things': OPERATOR_ONLY,
};

async function serviceApp(keys = K1) {
  const t = testApp({ service: 'things', internalAuth: { verifier: createCredentialVerifier({ service: 'things', ring: await parseInternalKeyRing(keys) }), access: ACCESS } });
  const ctx = (req: Parameters<typeof requestContext>[0], res: Parameters<typeof sendData>[0]) => {
    const c = requestContext(req);
    sendData(res, 200, { workspace: requireWorkspace(req), principal: c.principal, caller: c.caller?.caller, requestId: c.requestId });
  };
  t.route('GET', '/v1/things', ctx);
  t.route('GET', '/v1/things/:id', ctx);
  t.route('GET', '/internal/v1/workspaces/:ws/things', ctx);
  t.route('POST', '/admin/v1/workspaces/:ws/things', ctx);
  t.finalize();
  return t;
}

describe('key ring (INTERNAL_AUTH_KEYS)', () => {
  it('refuses an empty ring, a missing key id, a short key and a duplicate id, naming the entry but never the key', async () => {
    await expect(parseInternalKeyRing('')).rejects.toThrow(/empty/);
    await expect(parseInternalKeyRing(randomBytes(32).toString('base64'))).rejects.toThrow(/entry 1: expected <key id>:<base64 key>/);
    const short = `k1:${randomBytes(16).toString('base64')}`;
    await expect(parseInternalKeyRing(short)).rejects.toThrow(/key "k1": must be base64 of at least 32 bytes/);
    await expect(parseInternalKeyRing(`${K1},${K1}`)).rejects.toThrow(/key id "k1" appears twice/);
    const err = await parseInternalKeyRing(short).catch((e: Error) => e);
    expect(String(err)).not.toContain(short.slice(3));
  });

  it('signs with the first key and verifies with every key of the ring (a rollover without downtime)', async () => {
    const [k1Only, rolling, k2Only] = await Promise.all([parseInternalKeyRing(K1), parseInternalKeyRing(`${K2},${K1}`), parseInternalKeyRing(K2)]);
    const fromOld = await createCredentialSigner({ service: 'gateway', ring: k1Only }).sign('things', apiKey);
    const fromNew = await createCredentialSigner({ service: 'gateway', ring: rolling }).sign('things', apiKey);
    // During the rollover both kinds verify everywhere.
    await expect(createCredentialVerifier({ service: 'things', ring: rolling }).verify(`Bearer ${fromOld}`)).resolves.toMatchObject({ caller: 'gateway' });
    await expect(createCredentialVerifier({ service: 'things', ring: k1Only }).verify(`Bearer ${fromNew}`)).rejects.toThrow(CredentialRefused);
    await expect(createCredentialVerifier({ service: 'things', ring: k2Only }).verify(`Bearer ${fromNew}`)).resolves.toMatchObject({ workspaceId: 'wsp_a' });
    // After the old key is removed, what it signed is refused.
    await expect(createCredentialVerifier({ service: 'things', ring: k2Only }).verify(`Bearer ${fromOld}`)).rejects.toMatchObject({ reason: 'unknown_key' });
  });
});

describe('the credential a signer makes', () => {
  afterEach(() => jest.restoreAllMocks());

  it('is byte for byte the JWT jose SignJWT makes of the same claims, key and time (HS256, kid, iss, aud, iat, exp = iat + ttl)', async () => {
    const raw = randomBytes(32);
    const ring = await parseInternalKeyRing(`k9:${raw.toString('base64')}`);
    const now = 1_790_000_000_123;
    jest.spyOn(Date, 'now').mockReturnValue(now);
    const iat = Math.floor(now / 1000);
    const cases: Array<[OnBehalfOf, number | undefined]> = [
      [apiKey, undefined],
      [{ principal: 'admin', workspaceId: 'wsp_b', requestId: 'req_2' }, 45],
      [{ principal: 'booking_page', workspaceId: 'wsp_c', invitationId: 'biv_1', requestId: 'req_3' }, undefined],
      [{ principal: 'service', requestId: 'req_"\\\u2028' }, -60],
      [{ principal: 'api_key', workspaceId: 'wsp_d', apiKeyId: 'key_d', scopes: [], invitationId: 'biv_2', requestId: 'req_4' }, 30],
    ];
    for (const [who, ttlSeconds] of cases) {
      const signer = createCredentialSigner({ service: 'gateway', ring, ttlSeconds });
      for (const audience of ['availability', 'booking', 'availability']) {
        const made = await signer.sign(audience, who);
        const claims: Record<string, unknown> = { prn: who.principal, rid: who.requestId };
        if (who.workspaceId !== undefined) claims.wsp = who.workspaceId;
        if (who.apiKeyId !== undefined) claims.key = who.apiKeyId;
        if (who.scopes !== undefined) claims.scp = [...who.scopes];
        if (who.invitationId !== undefined) claims.inv = who.invitationId;
        const expected = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'k9' })
          .setIssuer('gateway')
          .setAudience(audience)
          .setIssuedAt(iat)
          .setExpirationTime(iat + (ttlSeconds ?? 30))
          .sign(raw);
        expect(made).toBe(expected);
      }
    }
  });
});

describe('a service behind the gateway checks the internal credential before any route', () => {
  it('answers 401 with the envelope without a credential, and with a malformed one', async () => {
    const t = await serviceApp();
    for (const authorization of [undefined, 'Bearer', 'Bearer not-a-jwt', 'Basic Zm9vOmJhcg==']) {
      const req = request(t.app).get('/v1/things').set('x-workspace-id', 'wsp_a');
      const res = await (authorization ? req.set('authorization', authorization) : req);
      expect({ authorization, status: res.status, code: res.body.error?.code }).toEqual({ authorization, status: 401, code: 'unauthenticated' });
      expect(res.body.meta.request_id).toMatch(/^req_/);
    }
    // Also on a path that does not exist: nothing is learnt about the routes without a credential.
    expect((await request(t.app).get('/v1/nowhere')).status).toBe(401);
  });

  it('answers 401 to an expired credential, one signed by another key, one for another service, and a forged algorithm', async () => {
    const t = await serviceApp();
    const expired = await bearer(K1, 'things', apiKey, { ttlSeconds: -60 });
    const wrongKey = await bearer(ring('k1'), 'things', apiKey);
    const otherAudience = await bearer(K1, 'booking', apiKey);
    const none = `Bearer ${await new SignJWT({ prn: 'api_key', rid: 'req_x' }).setProtectedHeader({ alg: 'HS512', kid: 'k1' }).setIssuer('gateway').setAudience('things').setIssuedAt().setExpirationTime('30s').sign(randomBytes(64))}`;
    for (const [what, authorization] of Object.entries({ expired, wrongKey, otherAudience, none })) {
      const res = await request(t.app).get('/v1/things').set('authorization', authorization);
      expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 401, code: 'unauthenticated' });
    }
    expect(t.lines.filter((l) => l.message === 'internal credential refused').map((l) => l.reason)).toEqual(
      expect.arrayContaining(['expired', 'bad_signature', 'wrong_audience']),
    );
  });

  it('takes the workspace, principal and request id from the credential and ignores context headers it does not vouch for', async () => {
    const t = await serviceApp();
    const res = await request(t.app)
      .get('/v1/things')
      .set('authorization', await bearer(K1, 'things', apiKey))
      .set('x-workspace-id', 'wsp_forged')
      .set('x-api-key-id', 'key_forged')
      .set('x-request-id', 'req_forged');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ workspace: 'wsp_a', principal: 'api_key', caller: 'gateway', requestId: 'req_cred1' });
    expect(res.headers['x-request-id']).toBe('req_cred1');
  });

  it('serves the probes and the scrape without a credential', async () => {
    const t = await serviceApp();
    expect((await request(t.app).get('/healthz')).status).toBe(200);
    expect((await request(t.app).get('/metrics')).status).toBe(200);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
  });
});

describe('each route says who may call it', () => {
  it('refuses a caller the route does not allow (403 forbidden)', async () => {
    const t = await serviceApp();
    const asCalendarSync = await bearer(K1, 'things', { ...apiKey, workspaceId: 'wsp_a' }, { caller: 'calendar-sync' });
    const res = await request(t.app).get('/internal/v1/workspaces/wsp_a/things').set('authorization', asCalendarSync);
    expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
    const asBooking = await bearer(K1, 'things', apiKey, { caller: 'booking' });
    expect((await request(t.app).get('/internal/v1/workspaces/wsp_a/things').set('authorization', asBooking)).status).toBe(200);
    // A v1 route is the gateway's to forward, not another service's.
    expect((await request(t.app).get('/v1/things').set('authorization', asBooking)).status).toBe(403);
  });

  it('refuses a principal the route does not serve, and an API key without the scope (403 insufficient_scope, scope named)', async () => {
    const t = await serviceApp();
    const page = await bearer(K1, 'things', { principal: 'booking_page', workspaceId: 'wsp_a', requestId: 'req_p' });
    expect((await request(t.app).get('/v1/things').set('authorization', page)).body.error.code).toBe('forbidden');
    const admin = await bearer(K1, 'things', { principal: 'admin', workspaceId: 'wsp_a', requestId: 'req_a' });
    expect((await request(t.app).get('/v1/things').set('authorization', admin)).status).toBe(403);
    const res = await request(t.app).get('/v1/things/thg_1').set('authorization', await bearer(K1, 'things', apiKey));
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: [{ field: 'scope', issue: 'bookings:write' }] });
  });

  it('refuses a valid credential for another workspace than the path (403 forbidden)', async () => {
    const t = await serviceApp();
    const admin = await bearer(K1, 'things', { principal: 'admin', workspaceId: 'wsp_a', requestId: 'req_a' });
    expect((await request(t.app).post('/admin/v1/workspaces/wsp_a/things').set('authorization', admin)).status).toBe(200);
    const res = await request(t.app).post('/admin/v1/workspaces/wsp_b/things').set('authorization', admin);
    expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
  });

  it('will not start with a route that has no rule, or a rule for a route it does not have', async () => {
    const verifier = createCredentialVerifier({ service: 'things', ring: await parseInternalKeyRing(K1) });
    const missing = testApp({ service: 'things', internalAuth: { verifier, access: {} } });
    expect(() => missing.route('GET', '/v1/things', (_req, res) => res.end())).toThrow(/route GET \/v1\/things has no access rule/);
    const stale = testApp({ service: 'things', internalAuth: { verifier, access: { 'GET /v1/gone': apiKeyWith('bookings:read') } } });
    expect(() => stale.finalize()).toThrow(/access rules for routes it does not have: GET \/v1\/gone/);
  });
});
