import fc from 'fast-check';
import { parseTimestamp } from '@sched/contracts';
import { instantOfTimestamp } from '../src/http/calendar-sync.client';

describe('instantOfTimestamp (busy answers are parsed with it)', () => {
  it('agrees with contracts parseTimestamp on every canonical timestamp', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('1970-01-01'), max: Date.parse('2100-12-31') }), (t) => {
        const ts = new Date(t).toISOString();
        expect(instantOfTimestamp(ts)).toBe(parseTimestamp(ts)!.getTime());
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses impossible dates and times that Date.parse would roll over', () => {
    for (const ts of ['2026-02-30T00:00:00.000Z', '2026-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-13-01T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T10:60:00.000Z', '2026-01-00T10:00:00.000Z']) {
      expect([ts, instantOfTimestamp(ts)]).toEqual([ts, null]);
    }
    expect(instantOfTimestamp('2028-02-29T23:59:59.999Z')).toBe(Date.parse('2028-02-29T23:59:59.999Z'));
  });
});
