import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { makeEvent, toWebhookBody } from '@sched/contracts';
import { makeBooking } from '../../contracts/test/fixtures';
import { verifyWebhook, WebhookVerificationError } from '../src';

const secret = `whsec_${randomBytes(24).toString('base64')}`;

/** Signs like webhook-dispatch does: Standard Webhooks over `{id}.{timestamp}.{body}`. */
function delivery(at = new Date()) {
  const body = toWebhookBody(makeEvent('booking.created', { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA', data: { booking: makeBooking() } }));
  const payload = JSON.stringify(body);
  const headers = {
    'webhook-id': body.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(body.id, at, payload),
  };
  return { body, payload, headers };
}

describe('verifyWebhook', () => {
  it('returns the typed body of a correctly signed, fresh delivery (node headers or fetch Headers)', () => {
    const { body, payload, headers } = delivery();
    const verified = verifyWebhook(payload, headers, secret);
    expect(verified).toEqual(body);
    expect(verified.type === 'booking.created' && verified.data.booking.id).toBe(body.data.booking.id);
    expect(verifyWebhook(Buffer.from(payload), new Headers(headers), secret)).toEqual(body);
    const upper = { 'Webhook-Id': headers['webhook-id'], 'Webhook-Timestamp': headers['webhook-timestamp'], 'Webhook-Signature': headers['webhook-signature'] };
    expect(verifyWebhook(payload, upper, secret)).toEqual(body);
  });

  it('rejects a tampered body', () => {
    const { payload, headers } = delivery();
    const tampered = payload.replace('"confirmed"', '"cancelled"');
    expect(tampered).not.toBe(payload);
    expect(() => verifyWebhook(tampered, headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(tampered, headers, secret)).toThrow(/signature/i);
  });

  it('rejects a timestamp older than 5 minutes even with a valid signature, and accepts one 4 minutes old', () => {
    const old = delivery(new Date(Date.now() - 6 * 60_000));
    expect(() => verifyWebhook(old.payload, old.headers, secret)).toThrow(/too old/);
    const recent = delivery(new Date(Date.now() - 4 * 60_000));
    expect(verifyWebhook(recent.payload, recent.headers, secret).id).toBe(recent.body.id);
  });

  it('rejects another secret, a missing header, a body id that is not the webhook-id, and a body of another shape', () => {
    const { payload, headers } = delivery();
    expect(() => verifyWebhook(payload, headers, `whsec_${randomBytes(24).toString('base64')}`)).toThrow(WebhookVerificationError);
    const { 'webhook-signature': _sig, ...unsigned } = headers;
    expect(() => verifyWebhook(payload, unsigned, secret)).toThrow('missing header webhook-signature');

    const now = new Date();
    const other = JSON.stringify({ ...JSON.parse(payload), id: 'wev_BBBBBBBBBBBBBBBBBBBBBB' });
    const signedWithOtherId = { ...headers, 'webhook-signature': new Webhook(secret).sign(headers['webhook-id'], now, other), 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) };
    expect(() => verifyWebhook(other, signedWithOtherId, secret)).toThrow('the body id differs from the webhook-id header');

    const notABody = JSON.stringify({ hello: 'world' });
    const signed = { ...headers, 'webhook-signature': new Webhook(secret).sign(headers['webhook-id'], now, notABody), 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) };
    expect(() => verifyWebhook(notABody, signed, secret)).toThrow('not a webhook body of contract v1');
  });
});
