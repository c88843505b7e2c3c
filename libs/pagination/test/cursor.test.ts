import { DomainError } from '@sched/contracts';
import { createCursorCodec, toPage } from '../src';

const codec = createCursorCodec('a-test-secret-of-enough-length');

function expectInvalid(fn: () => unknown) {
  try {
    fn();
    throw new Error('expected invalid_request');
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe('invalid_request');
    expect((e as DomainError).details).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
  }
}

describe('signed cursors', () => {
  const filters = { status: 'confirmed', starts_from: '2026-11-01T00:00:00.000Z', event_type_id: undefined };
  const position = { start_at: '2026-11-02T09:00:00.000Z', id: 'bkg_x' };

  it('round-trip the position when read with the same endpoint and filters (key order and undefined do not matter)', () => {
    const c = codec.encode('bookings', filters, position);
    expect(c.length).toBeLessThanOrEqual(2048);
    expect(codec.decode('bookings', { starts_from: '2026-11-01T00:00:00.000Z', status: 'confirmed' }, c)).toEqual(position);
  });

  it('fail when tampered, when used on another list, with other filters, or under another secret', () => {
    const c = codec.encode('bookings', filters, position);
    const [p, t] = c.split('.');
    const forged = Buffer.from(JSON.stringify({ ...position, id: 'bkg_y' })).toString('base64url');
    expectInvalid(() => codec.decode('bookings', filters, `${forged}.${t}`));
    expectInvalid(() => codec.decode('bookings', filters, `${p}.${t!.slice(0, -2)}AA`));
    expectInvalid(() => codec.decode('event-types', filters, c));
    expectInvalid(() => codec.decode('bookings', { ...filters, status: 'cancelled' }, c));
    expectInvalid(() => createCursorCodec('another-secret-of-enough-len').decode('bookings', filters, c));
  });

  it('fail for junk and for a cursor over 2048 characters', () => {
    for (const junk of ['', 'abc', 'a.b.c', '.', '%%%.%%%', 'x'.repeat(2049)]) expectInvalid(() => codec.decode('bookings', filters, junk));
  });
});

describe('toPage', () => {
  it('returns limit rows and the position of the last when there is another page', () => {
    expect(toPage([1, 2, 3], 2, (n) => n)).toEqual({ items: [1, 2], next: 2 });
    expect(toPage([1, 2], 2, (n) => n)).toEqual({ items: [1, 2], next: null });
    expect(toPage([], 2, (n) => n)).toEqual({ items: [], next: null });
  });
});
