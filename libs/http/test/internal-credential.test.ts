import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
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

describe('verifying at once (verifyNow) answers exactly what jose answers', () => {
  const NOW_S = 1_790_000_000;
  const SERVICE = 'things';
  const raw = randomBytes(32);
  const otherRaw = randomBytes(32);
  const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64url');
  const hmac = (key: Buffer, input: string) => createHmac('sha256', key).update(input).digest();

  beforeEach(() => {
    // Only the clock: jose reads `new Date()`, the fast path too; promises and timers stay real.
    jest.useFakeTimers({ now: NOW_S * 1000 + 400, doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'setInterval', 'setTimeout', 'clearImmediate', 'clearInterval', 'clearTimeout', 'hrtime', 'performance'] });
  });
  afterEach(() => jest.useRealTimers());

  /** A claim's value: absent, or of every JSON type, the numbers around the edges of the time checks. */
  const time = fc.oneof(
    fc.integer({ min: -40, max: 40 }).map((d) => NOW_S + d),
    fc.constantFrom(NOW_S - 5, NOW_S - 6, NOW_S + 5, NOW_S + 6, NOW_S + 0.5, NOW_S - 5.5, 0, -1, 1e300),
  );
  const anyJson = fc.oneof(fc.constant(null), fc.boolean(), fc.string({ maxLength: 4 }), fc.integer(), fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }), fc.object({ maxDepth: 1, maxKeys: 2 }));
  /** A claim of a valid claims set: kept (most often), removed, or replaced by a usual or any JSON value. */
  const REMOVE = Symbol('remove');
  const claim = <T>(usual: fc.Arbitrary<T>) => fc.option(fc.oneof({ weight: 4, arbitrary: usual }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: fc.constant(REMOVE) }), { nil: undefined, freq: 4 });
  const valid: Record<string, unknown> = { prn: 'api_key', rid: 'req_1', wsp: 'wsp_a', key: 'key_a', scp: ['slots:read'], iss: 'gateway', aud: SERVICE, iat: NOW_S, exp: NOW_S + 30 };
  const claims = fc
    .record({
      prn: claim(fc.constantFrom('api_key', 'admin', 'booking_page', 'service', 'root', '')),
      rid: claim(fc.constantFrom('req_1', '')),
      wsp: claim(fc.constantFrom('wsp_a', '')),
      key: claim(fc.constant('key_a')),
      scp: claim(fc.array(fc.constantFrom('slots:read', 'bookings:write'), { maxLength: 2 })),
      inv: claim(fc.constant('biv_1')),
      iss: claim(fc.constantFrom('gateway', '')),
      aud: claim(fc.oneof(fc.constantFrom(SERVICE, 'booking', ''), fc.array(fc.constantFrom(SERVICE, 'booking'), { maxLength: 3 }))),
      iat: claim(time),
      exp: claim(time),
      nbf: claim(time),
    })
    .map((changes) => {
      const c: Record<string, unknown> = { ...valid };
      for (const [name, value] of Object.entries(changes)) {
        if (value === REMOVE) delete c[name];
        else if (value !== undefined) c[name] = value;
      }
      return c;
    });
  /** The claims set's text: usually JSON of an object, sometimes another JSON value, not JSON, or not UTF-8. */
  const payload = fc.oneof(
    { weight: 12, arbitrary: claims.map((c) => b64(JSON.stringify(c))) },
    { weight: 1, arbitrary: anyJson.map((v) => b64(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.constantFrom('', b64('{"aud":'), b64(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), b64(' {"aud":"things"} '), 'e30', 'e30=', '!!') },
  );
  const knownHeader = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'k1' }));
  const header = fc.oneof(
    { weight: 12, arbitrary: fc.constant(knownHeader) },
    { weight: 1, arbitrary: fc.constantFrom(b64(JSON.stringify({ alg: 'HS256', kid: 'k1' })), b64(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'k2' })), b64(JSON.stringify({ alg: 'HS512', typ: 'JWT', kid: 'k1' })), b64('{"alg":"HS256","typ":"JWT","kid":"k1","crit":["x"]}'), '', 'e30') },
  );
  /** The signature: right, of another key, truncated, one character changed, padded, empty; the segments: three, two or four. */
  const token = fc
    .record({ header, payload, signature: fc.constantFrom('right', 'right', 'right', 'other', 'truncated', 'changed', 'padded', 'empty'), segments: fc.constantFrom(3, 3, 3, 3, 2, 4) })
    .map(({ header, payload, signature, segments }) => {
      const input = `${header}.${payload}`;
      const right = b64(hmac(raw, input));
      const sig = { right, other: b64(hmac(otherRaw, input)), truncated: right.slice(0, -2), changed: `${right[0] === 'A' ? 'B' : 'A'}${right.slice(1)}`, padded: `${right}A`, empty: '' }[signature];
      return segments === 3 ? `${input}.${sig}` : segments === 2 ? input : `${input}.${sig}.x`;
    });

  const outcome = (p: Promise<unknown>) => p.then((claims) => ({ claims }), (err: unknown) => ({ refused: err instanceof CredentialRefused ? err.reason : String(err) }));

  it('on generated tokens: the same claims or the same reason, and verifyNow answers every token with a header the signers write', async () => {
    const keyRing = await parseInternalKeyRing(`k1:${raw.toString('base64')}`);
    const fast = createCredentialVerifier({ service: SERVICE, ring: keyRing });
    const jose = createCredentialVerifier({ service: SERVICE, ring: keyRing, joseOnly: true });
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(token, async (t) => {
        const authorization = `Bearer ${t}`;
        const expected = await outcome(jose.verify(authorization));
        expect(await outcome(fast.verify(authorization))).toEqual(expected);
        let now: unknown;
        try {
          now = fast.verifyNow!(authorization);
          if (now !== undefined) now = { claims: now };
        } catch (err) {
          now = { refused: (err as CredentialRefused).reason };
        }
        // At once: a header the signers write, or a token the Authorization header cannot carry.
        if (t.startsWith(`${knownHeader}.`) || !/^[A-Za-z0-9_.-]+$/.test(t)) expect(now).toEqual(expected);
        else expect(now).toBeUndefined();
        seen.add('claims' in expected ? 'valid' : expected.refused);
      }),
      { numRuns: 3000 },
    );
    // The generator reached every outcome.
    expect([...seen].sort()).toEqual(['bad_signature', 'expired', 'invalid_claims', 'malformed', 'unknown_key', 'valid', 'wrong_audience']);
  });

  it('refuses the headers it needs no token for as verify() does (missing, malformed), at once', async () => {
    const fast = createCredentialVerifier({ service: SERVICE, ring: await parseInternalKeyRing(`k1:${raw.toString('base64')}`) });
    for (const [header, reason] of [[undefined, 'missing'], ['', 'missing'], ['Bearer', 'malformed'], ['Basic Zm9v', 'malformed'], ['Bearer a b', 'malformed'], ['Bearer a', undefined]] as const) {
      let got: unknown;
      try {
        got = fast.verifyNow!(header);
      } catch (err) {
        got = (err as CredentialRefused).reason;
      }
      expect({ header, got }).toEqual({ header, got: reason });
    }
  });

  it('accepts what the signers make, with the claims they were given', async () => {
    const keyRing = await parseInternalKeyRing(`k1:${raw.toString('base64')}`);
    const made = await createCredentialSigner({ service: 'gateway', ring: keyRing }).sign(SERVICE, apiKey);
    expect(createCredentialVerifier({ service: SERVICE, ring: keyRing }).verifyNow!(`Bearer ${made}`)).toEqual({ caller: 'gateway', ...apiKey, invitationId: undefined });
  });
});
