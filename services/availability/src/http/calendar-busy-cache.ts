import { MS_PER_DAY } from '@sched/contracts';
import { NotifiedCache, type KeptInStep } from '@sched/db';
import type { SlotSources } from '../domain/find-slots';
import type { Interval } from '../domain/slot-engine';

export interface CalendarBusyCopiesOptions {
  /**
   * Longest life of a copy, counted from when calendar-sync was asked: how much older than
   * calendar-sync's snapshot the busy time a check or a Slots answer uses may be. The Slots cache's
   * TTL (SLOTS_CACHE_TTL_MS) bounds the same thing, so the service passes that; 0 turns the copies off.
   */
  ttlMs: number;
  /** Most copies held (one per host and UTC day span); the least recently used go first. */
  maxEntries: number;
  /** The service's clock (ms). */
  now: () => number;
}

interface Copy {
  intervals: Interval[];
  expiresAt: number;
}

const startOfUtcDay = (ms: number) => Math.floor(ms / MS_PER_DAY) * MS_PER_DAY;
const endOfUtcDay = (ms: number) => Math.ceil(ms / MS_PER_DAY) * MS_PER_DAY;
/** The busy intervals overlapping `range`, as calendar-sync answers a window. */
const within = (intervals: Interval[], range: Interval) => intervals.filter((i) => i.start < range.end && i.end > range.start);

/**
 * Calendar busy time from calendar-sync, kept per host and whole UTC days for `ttlMs`, so the slot
 * checks of a burst of creates on one host's day cost one call to calendar-sync instead of one each
 * (issue 18: "how many hops and round trips a create's slot check takes"), and so do the Slots
 * answers recomputed after each of those Bookings. A request is widened to the UTC days it touches
 * (calendar-sync's snapshot range is whole UTC days, so a request inside it stays inside); a copy
 * answers any request inside its days while it is younger than the TTL. Concurrent misses of one
 * span share one call.
 *
 * What is not kept: "no calendar connection" (404) and every failure (fail closed is unchanged: a
 * 503 is never answered from a copy). The Bookings' own events need no invalidation: calendar-sync
 * leaves them out of busy time, and the booked-interval projection, read on every check, blocks
 * them; so a host's change notices (one per Booking) do not drop its copies. A calendar event added
 * or removed at the provider shows after calendar-sync's next snapshot refresh plus at most the TTL,
 * as inside Slots answers. Like the Slots cache, the copies are used only while the change LISTEN is
 * in place (`keepInStep`): while it is down every answer is computed afresh, as without a cache.
 */
export class CalendarBusyCopies implements KeptInStep {
  /** libs/db's NotifiedCache keeps the LRU bound and the LISTEN rules (enable/disable empty it, a read from before refused); no host notice reaches it. */
  private readonly copies: NotifiedCache<string, Copy>;
  private readonly inFlight = new Map<string, Promise<Interval[] | 'not_connected'>>();

  constructor(private readonly opts: CalendarBusyCopiesOptions) {
    this.copies = new NotifiedCache({ maxWeight: Math.max(1, opts.maxEntries) });
  }

  get size(): number {
    return this.copies.size;
  }

  /** `read` (calendar-sync's answer) behind the copies. */
  reader(read: SlotSources['calendarBusy']): SlotSources['calendarBusy'] {
    if (this.opts.ttlMs <= 0 || this.opts.maxEntries <= 0) return read;
    return async (workspaceId, hostId, range) => {
      if (!this.copies.isEnabled()) return read(workspaceId, hostId, range);
      const from = startOfUtcDay(range.start);
      const to = Math.max(endOfUtcDay(range.end), from + MS_PER_DAY);
      const key = `${workspaceId}\u0000${hostId}\u0000${from}\u0000${to}`;
      const copy = this.copies.get(key);
      if (copy !== undefined) {
        if (this.opts.now() < copy.expiresAt) return within(copy.intervals, range);
        this.copies.delete(key);
      }
      let running = this.inFlight.get(key);
      if (running === undefined) {
        const askedAt = this.opts.now();
        const stamp = this.copies.stamp();
        running = read(workspaceId, hostId, { start: from, end: to }).then((answer) => {
          // Refused when the copies were emptied (LISTEN lost or back) since the call started.
          if (answer !== 'not_connected') this.copies.put(key, { intervals: answer, expiresAt: askedAt + this.opts.ttlMs }, hostId, stamp);
          return answer;
        });
        const call = running;
        this.inFlight.set(key, call);
        const settled = () => this.inFlight.get(key) === call && this.inFlight.delete(key);
        call.then(settled, settled);
      }
      const answer = await running;
      return answer === 'not_connected' ? answer : within(answer, range);
    };
  }

  enable(): void {
    this.inFlight.clear();
    this.copies.enable();
  }

  disable(): void {
    this.inFlight.clear();
    this.copies.disable();
  }

  /** A host's change notice: its Bookings and settings, never its calendar busy time (see above). */
  invalidate(): void {}

  /** Everything in this service's tables may have changed (a TRUNCATE): start afresh, as the Slots cache does. */
  invalidateAll(): void {
    this.inFlight.clear();
    this.copies.invalidateAll();
  }
}

/** One KeptInStep driving several caches kept in step by the same LISTEN. */
export function allOf(...caches: KeptInStep[]): KeptInStep {
  return {
    enable: () => caches.forEach((c) => c.enable()),
    disable: () => caches.forEach((c) => c.disable()),
    invalidate: (group) => caches.forEach((c) => c.invalidate(group)),
    invalidateAll: () => caches.forEach((c) => c.invalidateAll()),
  };
}
