/**
 * The benchmarks' own webhook receiver (support/tenant.ts startReceiver), without a system: it still
 * verifies every delivery in both modes. The load generator's tests are libs/testing's closed-loop.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { makeEvent, toWebhookBody } from '@sched/contracts';
import { makeBooking } from '../../libs/contracts/test/fixtures';
import { startReceiver } from '../support/tenant';

const secret = `whsec_${randomBytes(24).toString('base64')}`;

/** A booking.created delivery signed as webhook-dispatch signs it; `tamper` changes the body after signing. */
function delivery(tamper = false) {
  const body = toWebhookBody(makeEvent('booking.created', { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA', data: { booking: makeBooking() } }));
  const payload = JSON.stringify(body);
  const at = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': body.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(body.id, at, payload),
  };
  return { body, payload: tamper ? payload.replace('"confirmed"', '"cancelled"') : payload, headers };
}

/** Every receiver a test starts, closed after it (close() of a receiver with a failed delivery throws: ignored here). */
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close().catch(() => undefined)));
});
async function receiver(opts?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(opts);
  r.secret.value = secret;
  open.push(r);
  return r;
}

async function deliver(url: string, d: ReturnType<typeof delivery>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: d.headers, body: d.payload });
  await res.arrayBuffer();
  return res.status;
}

describe("startReceiver verify 'each' (the e2e tests' receiver)", () => {
  it('records a correctly signed delivery and answers 400 to a tampered one, recording nothing', async () => {
    const r = await receiver();
    const good = delivery();
    expect(await deliver(r.url, good)).toBe(204);
    expect(await deliver(r.url, delivery(true))).toBe(400);
    expect(r.received.map((w) => [w.id, w.type, w.bookingId])).toEqual([[good.body.id, 'booking.created', (good.body.data as { booking: { id: string } }).booking.id]]);
    expect(r.verifyPending()).toBe(0);
  });
});

describe("startReceiver verify 'after' (the benchmarks' receiver)", () => {
  it('answers 204 at once, records every delivery with duplicates, and verifies them all later', async () => {
    const r = await receiver({ verify: 'after' });
    const d = delivery();
    expect(await deliver(r.url, d)).toBe(204);
    expect(await deliver(r.url, d)).toBe(204);
    expect(r.received).toHaveLength(2);
    expect(r.received[0]).toMatchObject({ id: d.body.id, type: 'booking.created', bookingId: (d.body.data as { booking: { id: string } }).booking.id, calendarStatus: 'pending' });
    expect(r.verifyPending()).toBe(2);
    expect(r.verifyPending()).toBe(0);
  });

  it('fails verifyPending, and close, on a delivery whose signature does not hold (answered 204 all the same)', async () => {
    const r = await receiver({ verify: 'after' });
    expect(await deliver(r.url, delivery())).toBe(204);
    expect(await deliver(r.url, delivery(true))).toBe(204);
    expect(r.received).toHaveLength(2);
    expect(() => r.verifyPending()).toThrow(/failed verification: .*signature/i);
    await expect(r.close()).rejects.toThrow(/failed verification/);
  });

  it('after the first verifyPending (the measured phase over), verifies each delivery as it arrives', async () => {
    const r = await receiver({ verify: 'after' });
    expect(await deliver(r.url, delivery())).toBe(204);
    expect(r.verifyPending()).toBe(1);
    expect(await deliver(r.url, delivery())).toBe(204);
    // Already verified on arrival: nothing left pending.
    expect(r.verifyPending()).toBe(0);
    expect(await deliver(r.url, delivery(true))).toBe(204);
    expect(() => r.verifyPending()).toThrow(/failed verification: .*signature/i);
  });

  it('defers again from deferVerification (a measured phase after a warm-up) to the next verifyPending', async () => {
    const r = await receiver({ verify: 'after' });
    expect(await deliver(r.url, delivery())).toBe(204);
    expect(r.verifyPending()).toBe(1); // the warm-up is over
    r.deferVerification(); // the measured phase
    expect(await deliver(r.url, delivery())).toBe(204);
    expect(await deliver(r.url, delivery())).toBe(204);
    // Both waited: verified now, not on arrival.
    expect(r.verifyPending()).toBe(2);
    // The phase is over: verified on arrival again.
    expect(await deliver(r.url, delivery())).toBe(204);
    expect(r.verifyPending()).toBe(0);
  });

  it('in a measured phase, verifies a delivery pending 4 minutes (within the 5-minute timestamp tolerance), not before', async () => {
    // Only the clock and the timers are faked: the HTTP exchange runs on real I/O.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const r = await receiver({ verify: 'after' });
      expect(await deliver(r.url, delivery())).toBe(204);
      jest.advanceTimersByTime(3.5 * 60_000);
      expect(await deliver(r.url, delivery())).toBe(204);
      jest.advanceTimersByTime(60_000);
      // The first (4.5 min old) was verified by the 30-s check, within the tolerance; the second (1 min old) still waits.
      expect(r.verifyPending()).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('fails on a delivery signed with another secret, and on one that is not JSON', async () => {
    for (const payload of [undefined, 'not json']) {
      const r = await receiver({ verify: 'after' });
      r.secret.value = `whsec_${randomBytes(24).toString('base64')}`;
      const d = delivery();
      expect(await deliver(r.url, payload === undefined ? d : { ...d, payload })).toBe(204);
      expect(() => r.verifyPending()).toThrow(/failed verification/);
    }
  });
});
