import { Webhook } from 'standardwebhooks';
import { activeSecrets, generateWebhookSecret, webhookHeaders } from '../src/domain/webhook-signing';

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
    const headers = webhookHeaders([secret], 'wev_x', body, new Date());
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
});
