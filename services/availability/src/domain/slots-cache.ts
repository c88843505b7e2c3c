/**
 * The port through which the Slots query keeps its answers until anything they were computed from may
 * have changed (store/notified-slots-cache.ts holds them).
 *
 * Every input but calendar busy time lives in this service's own tables (Event Type, host schedule
 * and timezone, the booked-interval and calendar-state projections); each change to them is announced
 * per host and drops that host's answers. Calendar busy time comes from calendar-sync, which keeps its
 * own snapshot fresh, so an answer also expires a TTL after its inputs were read: the extra staleness
 * busy time can have. Time itself changes an answer when its first slot falls inside the minimum
 * notice, so an answer never outlives that moment (`expiresAt` of `put`).
 */
export interface SlotsCache {
  /** A valid answer (the UTF-8 bytes of its JSON text, as put), or undefined. */
  get(key: string, now: number): Buffer | undefined;
  /** Call before reading the inputs of an answer for `key`. */
  ticket(key: string, now: number): SlotsCacheTicket;
  /**
   * Stores an answer computed after `ticket` was taken, for the host it was computed for, unless
   * that host's inputs changed meanwhile or it is already expired. True if stored.
   */
  put(ticket: SlotsCacheTicket, hostId: string, json: Buffer, expiresAt: number, now: number): boolean;
  /**
   * Whether an answer computed from inputs read after `ticket` may still be served at `now`, as a
   * stored one would be: the cache is serving, nothing was invalidated since the ticket, and the
   * ticket is within the TTL. A request that finds the same answer being computed joins it only then.
   */
  stillValid(ticket: SlotsCacheTicket, now: number): boolean;
}

/** Taken before an answer's inputs are read; a change after it makes the answer unstorable. */
export interface SlotsCacheTicket {
  readonly key: string;
  readonly stamp: number;
  /** When the inputs started to be read: the answer's age counts from here. */
  readonly at: number;
}

/** Keyed by everything an answer depends on besides the inputs the invalidations cover. */
export function slotsCacheKey(workspaceId: string, eventTypeId: string, from: string, to: string, timezone: string): string {
  return `${workspaceId}\u0000${eventTypeId}\u0000${from}\u0000${to}\u0000${timezone}`;
}
