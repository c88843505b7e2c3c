import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SigningKeys } from '../src/delivery/signing-keys';
import { activeSecrets, generateWebhookSecret, signingKey, webhookHeaders } from '../src/domain/webhook-signing';

describe('Standard Webhooks signing', () => {
  it('makes secrets whsec_<base64 of 32 random bytes>, different each time', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });

  it('signs so that the standard verifier accepts the delivery and refuses a changed body', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ id: 'wev_x', type: 'booking.created' });
    const headers = webhookHeaders([signingKey(secret)], 'wev_x', body, new Date());
    expect(headers['webhook-id']).toBe('wev_x');
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ id: 'wev_x', type: 'booking.created' });
    expect(() => new Webhook(secret).verify(body.replace('created', 'cancelled'), headers)).toThrow();
  });

  it('signs with both secrets during a rotation, and only the new one after the overlap', () => {
    const now = new Date('2026-11-22T09:30:00.000Z');
    const secrets = { current: 'whsec_bmV3', previous: 'whsec_b2xk', previousExpiresAt: new Date(now.getTime() + 1000) };
    expect(activeSecrets(secrets, now)).toEqual(['whsec_bmV3', 'whsec_b2xk']);
    expect(activeSecrets(secrets, new Date(now.getTime() + 1000))).toEqual(['whsec_bmV3']);
    expect(activeSecrets({ current: 'whsec_bmV3', previous: null, previousExpiresAt: null }, now)).toEqual(['whsec_bmV3']);
  });

  it('signs byte for byte as the standardwebhooks package does, for any secret, id, time and body', () => {
    const bodies = [
      '',
      '{}',
      JSON.stringify({ id: 'wev_x', data: { note: 'Grüße, 予約 🎉, "quotes", \\ and \n' } }),
      JSON.stringify({ lone: '\ud800' }),
      'x'.repeat(70_000),
    ];
    for (let i = 0; i < 40; i++) {
      // Secrets of the documented form and of other lengths (decisions.md: 24+ bytes), with and without the prefix.
      const raw = randomBytes([24, 32, 33, 64][i % 4]!).toString('base64');
      const secret = i % 5 === 0 ? raw : `whsec_${raw}`;
      const id = `wev_${randomBytes(16).toString('base64url')}`;
      const at = new Date(1_700_000_000_000 + i * 1_234_567);
      const body = bodies[i % bodies.length]! + (i % 3 === 0 ? '' : randomBytes(i).toString('hex'));
      expect(webhookHeaders([signingKey(secret)], id, body, at)['webhook-signature']).toBe(new Webhook(secret).sign(id, at, body));
    }
  });

  it('signs with every active key, in order, space-separated, each verifying with its own secret', () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const at = new Date();
    const body = '{"id":"wev_x"}';
    const headers = webhookHeaders([signingKey(current), signingKey(previous)], 'wev_x', body, at);
    expect(headers['webhook-signature']).toBe(`${new Webhook(current).sign('wev_x', at, body)} ${new Webhook(previous).sign('wev_x', at, body)}`);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(new Webhook(current).verify(body, headers)).toEqual({ id: 'wev_x' });
    expect(new Webhook(previous).verify(body, headers)).toEqual({ id: 'wev_x' });
  });

  it('refuses an empty secret and a malformed one, as the package does, and anything but canonical base64', () => {
    for (const bad of ['whsec_', '', 'whsec_not*base64', 'whsec_YWJj ZGVm']) {
      expect(() => signingKey(bad)).toThrow();
      expect(() => new Webhook(bad).sign('wev_x', new Date(), '{}')).toThrow();
    }
    // The package also reads unpadded and non-canonical spellings; the service never stores one (it makes
    // every secret with generateWebhookSecret), so such a value is refused rather than guessed at.
    for (const odd of ['whsec_YWJjZA', 'whsec_YWJjZB==']) expect(() => signingKey(odd)).toThrow('Secret is not base64.');
  });
});

describe('signing keys of deliveries', () => {
  const opened: Array<[string, string]> = [];
  const box = {
    // A stand-in for the SecretBox: "sealed" values are `sealed:<secret>`, bound to the endpoint id.
    open(sealed: string, endpointId = '') {
      opened.push([sealed, endpointId]);
      if (!sealed.startsWith(`sealed:${endpointId}:`)) throw new Error('does not open');
      return sealed.slice(`sealed:${endpointId}:`.length);
    },
  };
  const now = new Date('2026-11-22T09:30:00.000Z');
  const current = generateWebhookSecret();
  const previous = generateWebhookSecret();
  const delivery = (o: Partial<{ endpointId: string; secretSealed: string; previousSecretSealed: string | null; previousExpiresAt: Date | null }> = {}) => ({
    endpointId: o.endpointId ?? 'whe_1',
    secretSealed: o.secretSealed ?? `sealed:whe_1:${current}`,
    previousSecretSealed: o.previousSecretSealed === undefined ? `sealed:whe_1:${previous}` : o.previousSecretSealed,
    previousSecretExpiresAt: o.previousExpiresAt === undefined ? new Date(now.getTime() + 1000) : o.previousExpiresAt,
  });
  const sign = (keys: ReturnType<SigningKeys['forAttempt']>) => webhookHeaders(keys, 'wev_x', '{}', now)['webhook-signature'];

  beforeEach(() => (opened.length = 0));

  it('unseals each secret once, and signs with the current and, during the overlap, the previous secret', () => {
    const keys = new SigningKeys(box);
    const both = `${new Webhook(current).sign('wev_x', now, '{}')} ${new Webhook(previous).sign('wev_x', now, '{}')}`;
    expect(sign(keys.forAttempt(delivery(), now))).toBe(both);
    expect(sign(keys.forAttempt(delivery(), now))).toBe(both);
    expect(opened).toEqual([
      [`sealed:whe_1:${current}`, 'whe_1'],
      [`sealed:whe_1:${previous}`, 'whe_1'],
    ]);
    // The overlap over: the current secret alone; no previous one: the same.
    expect(sign(keys.forAttempt(delivery(), new Date(now.getTime() + 1000)))).toBe(new Webhook(current).sign('wev_x', now, '{}'));
    expect(sign(keys.forAttempt(delivery({ previousSecretSealed: null, previousExpiresAt: null }), now))).toBe(new Webhook(current).sign('wev_x', now, '{}'));
    expect(opened).toHaveLength(2);
  });

  it('takes a rotated secret at once, opens with the endpoint id each time it is unsealed, and remembers no failure', () => {
    const keys = new SigningKeys(box);
    keys.forAttempt(delivery({ previousSecretSealed: null }), now);
    const rotated = generateWebhookSecret();
    expect(sign(keys.forAttempt(delivery({ secretSealed: `sealed:whe_1:${rotated}`, previousSecretSealed: null }), now))).toBe(new Webhook(rotated).sign('wev_x', now, '{}'));
    // The same sealed value under another endpoint is opened (and refused) for that endpoint, never taken from memory.
    expect(() => keys.forAttempt(delivery({ endpointId: 'whe_2', previousSecretSealed: null }), now)).toThrow('does not open');
    expect(() => keys.forAttempt(delivery({ endpointId: 'whe_2', previousSecretSealed: null }), now)).toThrow('does not open');
    expect(opened.map(([, endpointId]) => endpointId)).toEqual(['whe_1', 'whe_1', 'whe_2', 'whe_2']);
  });

  it('keeps at most maxEntries keys, the least recently used going first', () => {
    const keys = new SigningKeys(box, { maxEntries: 2 });
    const secrets = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const d = (n: number) => delivery({ secretSealed: `sealed:whe_1:${secrets[n]}`, previousSecretSealed: null });
    keys.forAttempt(d(0), now);
    keys.forAttempt(d(1), now);
    keys.forAttempt(d(0), now); // 0 used last: 1 goes first
    keys.forAttempt(d(2), now);
    expect(keys.size).toBe(2);
    opened.length = 0;
    keys.forAttempt(d(0), now);
    keys.forAttempt(d(2), now);
    expect(opened).toEqual([]);
    keys.forAttempt(d(1), now);
    expect(opened).toHaveLength(1);
  });
});
