import { bookingSchema } from '@sched/contracts';
import { logEntries, makeBooking, settle, waitForEventsHandled, waitForLog } from '../src';

describe('settle', () => {
  it('waits the given time, and refuses to wait without a reason', async () => {
    const started = Date.now();
    await settle(30, 'nothing announces it');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    await expect(settle(10, ' ')).rejects.toThrow(/say why/);
  });
});

describe('log lines', () => {
  it('reads JSON entries out of chunks of several lines, skipping other text', () => {
    expect(logEntries(['{"message":"a"}\n{"message":"b"}\n', 'not json\n', '{"message":"c"'])).toEqual([{ message: 'a' }, { message: 'b' }]);
  });

  it('waitForLog resolves once enough matching entries arrived, and names what it missed on timeout', async () => {
    const lines: string[] = [];
    setTimeout(() => lines.push('{"message":"done","id":1}\n', '{"message":"done","id":2}\n'), 20);
    await expect(waitForLog(lines, { message: 'done' }, { count: 2, intervalMs: 5 })).resolves.toHaveLength(2);
    await expect(waitForLog(lines, { message: 'done', id: 3 }, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/"id":3/);
  });

  it('waitForEventsHandled counts handled and duplicate lines per event id', async () => {
    const lines = ['{"message":"event handled","event_id":"e1"}\n', '{"message":"duplicate event skipped","event_id":"e1"}\n', '{"message":"other","event_id":"e2"}\n'];
    await expect(waitForEventsHandled(lines, ['e1', 'e1'], { timeoutMs: 50 })).resolves.toBeUndefined();
    await expect(waitForEventsHandled(lines, ['e1', 'e1', 'e1'], { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/e1/);
    await expect(waitForEventsHandled(lines, ['e2'], { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/e2/);
    // From a point on: the first line no longer counts.
    await expect(waitForEventsHandled(lines, ['e1'], { from: 1, timeoutMs: 30 })).resolves.toBeUndefined();
    await expect(waitForEventsHandled(lines, ['e1', 'e1'], { from: 1, timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/e1/);
  });
});

describe('makeBooking', () => {
  it('is a valid Booking contract object with fresh ids, keeping 30 minutes for a given start', () => {
    const a = makeBooking();
    const b = makeBooking({ start_at: '2026-06-08T08:00:00.000Z', status: 'cancelled' });
    expect(bookingSchema.parse(a)).toEqual(a);
    expect(bookingSchema.parse(b)).toEqual(b);
    expect(a.id).not.toBe(b.id);
    expect(b).toMatchObject({ start_at: '2026-06-08T08:00:00.000Z', end_at: '2026-06-08T08:30:00.000Z', status: 'cancelled' });
    expect(makeBooking({ start_at: '2026-06-08T08:00:00.000Z', end_at: '2026-06-08T09:00:00.000Z' }).end_at).toBe('2026-06-08T09:00:00.000Z');
  });
});
