import { DomainError } from '@sched/contracts';
import { listSlotsJson, type SlotSources } from '../src/domain/find-slots';
import { NotifiedSlotsCache } from '../src/store/notified-slots-cache';
import { everyDay, memorySources, WS } from './support/memory-sources';

const EVT = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const HOST = 'hst_AAAAAAAAAAAAAAAAAAAAAA';
const NOW = new Date('2026-06-01T06:00:00.000Z');
const schedule = { weekly: everyDay('09:00', '12:00'), overrides: [] };
const query = { from: '2026-06-02', to: '2026-06-02', timezone: 'UTC' };
const later = (ms: number) => new Date(NOW.getTime() + ms);

/**
 * Sources whose calendar read waits until `release()`: a computation can be held open while other
 * requests arrive. `reads` counts the computations that reached the calendar.
 */
function heldSources(opts: { calendar?: 'unavailable'; eventType?: Parameters<typeof memorySources>[0]['eventType'] } = {}) {
  const inner = memorySources({ hostTimezone: 'UTC', schedule, eventType: opts.eventType, calendar: opts.calendar });
  let open: Array<() => void> = [];
  let reads = 0;
  const sources: SlotSources = {
    loadContext: inner.loadContext,
    bookedIntervals: inner.bookedIntervals,
    calendarBusy: async (ws, host, range) => {
      reads += 1;
      await new Promise<void>((r) => open.push(r));
      return inner.calendarBusy(ws, host, range);
    },
  };
  return {
    sources,
    reads: () => reads,
    release() {
      const waiting = open;
      open = [];
      waiting.forEach((r) => r());
    },
  };
}

function cache(ttlMs = 5000): NotifiedSlotsCache {
  const c = new NotifiedSlotsCache({ ttlMs, maxBytes: 1_000_000 });
  c.enable();
  return c;
}

/** Lets pending promise callbacks run (the held computation reaches its calendar read). */
const tick = () => new Promise((r) => setImmediate(r));

describe('listSlotsJson: requests for an answer being computed join it', () => {
  it('computes once for concurrent misses of one key, and every request gets the same answer', async () => {
    const held = heldSources();
    const c = cache();
    const answers = Array.from({ length: 20 }, (_, i) => listSlotsJson(c, held.sources, WS, EVT, query, later(i)));
    await tick();
    held.release();
    const all = await Promise.all(answers);
    expect(held.reads()).toBe(1);
    expect(new Set(all).size).toBe(1);
    expect(JSON.parse(all[0]!.toString('utf8'))).toHaveLength(6); // 09:00–12:00, 30-minute slots
  });

  it('does not join a computation when something was invalidated after it started: that request computes its own', async () => {
    const held = heldSources();
    const c = cache();
    const first = listSlotsJson(c, held.sources, WS, EVT, query, NOW);
    await tick();
    c.invalidate(HOST); // e.g. a Booking landed while the first answer was being computed
    const second = listSlotsJson(c, held.sources, WS, EVT, query, later(1));
    await tick();
    expect(held.reads()).toBe(2);
    held.release();
    await Promise.all([first, second]);
  });

  it('does not join while the cache is not serving (LISTEN down), nor past the TTL of the running computation', async () => {
    const held = heldSources();
    const c = cache(1000);
    c.disable();
    const a = listSlotsJson(c, held.sources, WS, EVT, query, NOW);
    const b = listSlotsJson(c, held.sources, WS, EVT, query, later(1));
    await tick();
    expect(held.reads()).toBe(2);
    held.release();
    await Promise.all([a, b]);

    c.enable();
    const first = listSlotsJson(c, held.sources, WS, EVT, query, NOW);
    const pastTtl = listSlotsJson(c, held.sources, WS, EVT, query, later(1000));
    await tick();
    expect(held.reads()).toBe(4);
    held.release();
    await Promise.all([first, pastTtl]);
  });

  it('does not serve a joined answer to a request made after its first slot entered the minimum notice', async () => {
    // 60-minute notice: at 07:59:59 the 09:00 slot is still offered, a millisecond past 08:00 it is not.
    const held = heldSources({ eventType: { minimumNoticeMinutes: 60 } });
    const c = cache(24 * 3_600_000);
    const today = { from: '2026-06-01', to: '2026-06-01', timezone: 'UTC' };
    const early = listSlotsJson(c, held.sources, WS, EVT, today, new Date('2026-06-01T07:59:59.000Z'));
    await tick();
    const late = listSlotsJson(c, held.sources, WS, EVT, today, new Date('2026-06-01T08:00:00.001Z'));
    await tick();
    held.release();
    await tick();
    held.release(); // the late request's own computation, started once the joined answer proved too old
    const [e, l] = await Promise.all([early, late]);
    expect(JSON.parse(e.toString('utf8'))[0].start_at).toBe('2026-06-01T09:00:00.000Z');
    expect(JSON.parse(l.toString('utf8'))[0].start_at).toBe('2026-06-01T09:30:00.000Z');
    expect(held.reads()).toBe(2);
  });

  it('gives the joined requests the computation\'s error, and caches nothing', async () => {
    const held = heldSources({ calendar: 'unavailable' });
    const c = cache();
    const results = Array.from({ length: 3 }, (_, i) => listSlotsJson(c, held.sources, WS, EVT, query, later(i)).catch((e: unknown) => e));
    await tick();
    held.release();
    const errors = await Promise.all(results);
    expect(held.reads()).toBe(1);
    for (const e of errors) expect(e instanceof DomainError && e.code).toBe('calendar_unavailable');
    expect(c.size).toBe(0);
  });
});
