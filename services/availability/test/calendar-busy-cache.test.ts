import { DomainError } from '@sched/contracts';
import type { SlotSources } from '../src/domain/find-slots';
import type { Interval } from '../src/domain/slot-engine';
import { allOf, CalendarBusyCopies } from '../src/http/calendar-busy-cache';

const T = (s: string) => Date.parse(s);
const WS = 'wsp_1';
const HOST = 'hst_1';

/** calendar-sync as the copies see it: records every window asked for; answers from `busy` (or as told). */
function calendarSync(busy: Interval[]) {
  const asked: Interval[] = [];
  let answer: 'busy' | 'not_connected' | 'unavailable' = 'busy';
  let gate: Promise<void> | undefined;
  const read: SlotSources['calendarBusy'] = async (_ws, _host, range) => {
    asked.push(range);
    if (gate) await gate;
    if (answer === 'unavailable') throw new DomainError('calendar_unavailable', { retryAfterSeconds: 5 });
    if (answer === 'not_connected') return 'not_connected';
    return busy.filter((i) => i.start < range.end && i.end > range.start);
  };
  return {
    read,
    asked,
    answer: (a: typeof answer) => (answer = a),
    hold() {
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

function copies(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  let now = T('2026-06-08T06:00:00.000Z');
  const c = new CalendarBusyCopies({ ttlMs: opts.ttlMs ?? 5000, maxEntries: opts.maxEntries ?? 100, now: () => now });
  c.enable(); // LISTEN in place
  return { c, advance: (ms: number) => (now += ms) };
}

const meeting = { start: T('2026-06-09T10:00:00.000Z'), end: T('2026-06-09T10:30:00.000Z') };
const allDayElsewhere = { start: T('2026-06-10T00:00:00.000Z'), end: T('2026-06-11T00:00:00.000Z') };
const check = (hhmm: string, day = '2026-06-09') => ({ start: T(`${day}T${hhmm}:00.000Z`), end: T(`${day}T${hhmm}:00.000Z`) + 30 * 60_000 });

describe('CalendarBusyCopies: calendar-sync busy time kept per host and UTC day for the TTL', () => {
  it('asks calendar-sync once for the whole UTC day, and answers every check on that day from the copy with what overlaps it', async () => {
    const cs = calendarSync([meeting, allDayElsewhere]);
    const { c } = copies();
    const busy = c.reader(cs.read);
    expect(await busy(WS, HOST, check('10:00'))).toEqual([meeting]);
    expect(await busy(WS, HOST, check('11:00'))).toEqual([]);
    expect(await busy(WS, HOST, check('09:45'))).toEqual([meeting]);
    expect(cs.asked).toEqual([{ start: T('2026-06-09T00:00:00.000Z'), end: T('2026-06-10T00:00:00.000Z') }]);
    // Another day, another copy; a window over two days asks for both.
    expect(await busy(WS, HOST, check('10:00', '2026-06-10'))).toEqual([allDayElsewhere]);
    expect(await busy(WS, HOST, { start: T('2026-06-09T23:00:00.000Z'), end: T('2026-06-10T01:00:00.000Z') })).toEqual([allDayElsewhere]);
    expect(cs.asked.slice(1)).toEqual([
      { start: T('2026-06-10T00:00:00.000Z'), end: T('2026-06-11T00:00:00.000Z') },
      { start: T('2026-06-09T00:00:00.000Z'), end: T('2026-06-11T00:00:00.000Z') },
    ]);
    // Hosts and workspaces never share a copy.
    await busy(WS, 'hst_2', check('10:00'));
    await busy('wsp_2', HOST, check('10:00'));
    expect(cs.asked).toHaveLength(5);
  });

  it('asks again once the copy is as old as the TTL', async () => {
    const cs = calendarSync([meeting]);
    const { c, advance } = copies({ ttlMs: 5000 });
    const busy = c.reader(cs.read);
    await busy(WS, HOST, check('10:00'));
    advance(4999);
    await busy(WS, HOST, check('10:00'));
    expect(cs.asked).toHaveLength(1);
    advance(1);
    await busy(WS, HOST, check('10:00'));
    expect(cs.asked).toHaveLength(2);
  });

  it('shares one call among concurrent checks of a day, its error too, and keeps neither failures nor "not connected"', async () => {
    const cs = calendarSync([meeting]);
    const { c } = copies();
    const busy = c.reader(cs.read);
    const release = cs.hold();
    const answers = Promise.all(['09:00', '10:00', '11:00'].map((t) => busy(WS, HOST, check(t))));
    release();
    expect(await answers).toEqual([[], [meeting], []]);
    expect(cs.asked).toHaveLength(1);

    const other = '2026-06-12';
    cs.answer('unavailable');
    const release2 = cs.hold();
    const failing = ['09:00', '10:00'].map((t) => busy(WS, HOST, check(t, other)).catch((e: unknown) => e));
    release2();
    for (const e of await Promise.all(failing)) expect(e instanceof DomainError && e.code).toBe('calendar_unavailable');
    expect(cs.asked).toHaveLength(2);
    await busy(WS, HOST, check('09:00', other)).catch(() => undefined);
    expect(cs.asked).toHaveLength(3); // the failure was not kept

    cs.answer('not_connected');
    expect(await busy(WS, HOST, check('09:00', '2026-06-13'))).toBe('not_connected');
    expect(await busy(WS, HOST, check('09:00', '2026-06-13'))).toBe('not_connected');
    expect(cs.asked).toHaveLength(5);
  });

  it('is not used while the change LISTEN is down, starts empty when it is back, and keeps no answer asked for before', async () => {
    const cs = calendarSync([meeting]);
    const { c } = copies();
    const busy = c.reader(cs.read);
    await busy(WS, HOST, check('10:00'));
    expect(c.size).toBe(1);
    c.disable();
    expect(c.size).toBe(0);
    await busy(WS, HOST, check('10:00'));
    await busy(WS, HOST, check('10:00'));
    expect(cs.asked).toHaveLength(3);
    expect(c.size).toBe(0);

    c.enable();
    const release = cs.hold();
    const pending = busy(WS, HOST, check('10:00'));
    c.enable(); // LISTEN re-established while the call was out: changes may have gone unheard
    release();
    await pending;
    expect(c.size).toBe(0);
  });

  it('holds at most maxEntries copies, the least recently used going first, and with a TTL of 0 is only calendar-sync', async () => {
    const cs = calendarSync([]);
    const { c } = copies({ maxEntries: 2 });
    const busy = c.reader(cs.read);
    await busy(WS, HOST, check('10:00', '2026-06-09'));
    await busy(WS, HOST, check('10:00', '2026-06-10'));
    await busy(WS, HOST, check('10:00', '2026-06-09')); // 06-09 used last
    await busy(WS, HOST, check('10:00', '2026-06-11')); // 06-10 goes
    expect(c.size).toBe(2);
    await busy(WS, HOST, check('10:00', '2026-06-09'));
    expect(cs.asked).toHaveLength(3);
    await busy(WS, HOST, check('10:00', '2026-06-10'));
    expect(cs.asked).toHaveLength(4);

    const off = calendarSync([]);
    const none = new CalendarBusyCopies({ ttlMs: 0, maxEntries: 100, now: () => 0 });
    none.enable();
    expect(none.reader(off.read)).toBe(off.read);
  });

  it('allOf drives every cache from one LISTEN', () => {
    const calls: string[] = [];
    const spy = (name: string) => ({
      enable: () => calls.push(`${name}.enable`),
      disable: () => calls.push(`${name}.disable`),
      invalidate: (g: string) => calls.push(`${name}.invalidate:${g}`),
      invalidateAll: () => calls.push(`${name}.invalidateAll`),
    });
    const both = allOf(spy('a'), spy('b'));
    both.enable();
    both.invalidate('hst_1');
    both.invalidateAll();
    both.disable();
    expect(calls).toEqual(['a.enable', 'b.enable', 'a.invalidate:hst_1', 'b.invalidate:hst_1', 'a.invalidateAll', 'b.invalidateAll', 'a.disable', 'b.disable']);
  });
});
