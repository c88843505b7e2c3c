import { DomainError, MS_PER_DAY, toTimestamp, type BusyResponse } from '@sched/contracts';
import { busyItemsFrom, covers, isFresh, mergeIntervals, overlapping, snapshotRange, toIntervals, type BusyItem, type Interval } from './busy-times';
import { bookingIdFromUid, bookingEventUid } from './booking-event';
import { isProviderError, type CalendarProvider } from './calendar-provider';
import { accessFor, noteProviderFailure, noteProviderSuccess } from './connection-status';
import { refreshHostDetails } from './calendar-connections';
import type { Connection, HostDirectory, SecretSealer, Snapshot, Store } from './ports';

export interface BusyReaderOptions {
  freshnessMs: number;
  snapshotDays: number;
  /** Retry-After of a 503: about when a retry may find the provider back. */
  retryAfterSeconds: number;
}

export interface BusyReaderDeps {
  store: Store;
  provider: CalendarProvider;
  sealer: SecretSealer;
  hosts: HostDirectory;
}

const NOTE_QUERIED_EVERY_MS = 30_000;

/** A snapshot's busy intervals as answered (merged, in the host's zone, own events left out), kept with its items. */
interface MergedBusy {
  timeZone: string;
  excluded: string;
  intervals: Array<Interval & { start_at: string; end_at: string }>;
}
const MAX_NOTED = 10_000;

/** Windows sent to the provider are a day wider on each side, so all-day and floating events of any zone are caught. */
function providerWindow(w: Interval): { from: Date; to: Date } {
  return { from: new Date(w.start.getTime() - MS_PER_DAY), to: new Date(w.end.getTime() + MS_PER_DAY) };
}

/**
 * Busy times of hosts (rule 4, rule 5). Each host has one snapshot over a cached range, refreshed as
 * a whole; a request is served from it while it is fresh and covers the window. Otherwise the provider
 * is read now: the whole range when the window lies inside it (so the next requests hit the cache),
 * just the window when it lies outside. No fresh snapshot and no provider → 503 calendar_unavailable.
 */
export class BusyReader {
  /** One provider read per connection at a time in this process; concurrent requests share it. */
  private readonly inFlight = new Map<string, Promise<Snapshot>>();
  /** When this process last recorded a query per connection: a busy host costs no write per request. */
  private readonly noted = new Map<string, number>();
  /**
   * Per items list (a snapshot's, as the store hands it out again while unchanged): its merged
   * intervals, so a busy query on an unchanged snapshot only picks the window out of them.
   */
  private readonly merged = new WeakMap<readonly BusyItem[], MergedBusy>();
  /** Per items list: the Booking ids its events in this service's UID form name. */
  private readonly candidates = new WeakMap<readonly BusyItem[], string[]>();

  constructor(
    private readonly deps: BusyReaderDeps,
    private readonly opts: BusyReaderOptions,
  ) {}

  async busy(input: { workspaceId: string; hostId: string; window: Interval; now: Date }): Promise<BusyResponse> {
    const { store } = this.deps;
    const conn = await store.findConnection(input.workspaceId, input.hostId);
    if (!conn) throw new DomainError('not_found');
    await this.noteQueried(conn, input.now);

    const cached = await store.getSnapshot(conn);
    if (cached && isFresh(cached.fetchedAt, input.now, this.opts.freshnessMs) && covers(cached.range, input.window)) {
      return this.answer(conn, cached.items, cached.fetchedAt, input.window);
    }
    try {
      if (covers(snapshotRange(input.now, this.opts.snapshotDays), input.window)) {
        const fresh = await this.refresh(conn, input.now);
        return this.answer(conn, fresh.items, fresh.fetchedAt, input.window);
      }
      const items = await this.readThrough(conn, input.window);
      return this.answer(conn, items, input.now, input.window);
    } catch (err) {
      if (!isProviderError(err)) throw err;
      throw new DomainError('calendar_unavailable', { retryAfterSeconds: this.opts.retryAfterSeconds });
    }
  }

  private async noteQueried(conn: Connection, now: Date): Promise<void> {
    const last = this.noted.get(conn.id);
    if (last !== undefined && now.getTime() - last < NOTE_QUERIED_EVERY_MS) return;
    if (this.noted.size >= MAX_NOTED) this.noted.clear(); // bounded memory; the cost is one extra write per host
    this.noted.set(conn.id, now.getTime());
    await this.deps.store.noteQueried(conn);
  }

  /** A window outside the cached range is read on its own and not kept. */
  private async readThrough(conn: Connection, window: Interval): Promise<BusyItem[]> {
    try {
      const events = await this.deps.provider.listEvents(accessFor(conn, this.deps.sealer), providerWindow(window));
      await noteProviderSuccess(this.deps.store, conn);
      return busyItemsFrom(events);
    } catch (err) {
      if (isProviderError(err)) await noteProviderFailure(this.deps.store, conn, err);
      throw err;
    }
  }

  /**
   * Brings the host's snapshot up to date: one PROPFIND for the change marker; if it matches the
   * snapshot's and the cached range is still the current one, the snapshot is only marked fresh.
   * Otherwise the whole range is read again. Throws ProviderError when the provider cannot be read.
   */
  refresh(conn: Connection, now: Date): Promise<Snapshot> {
    const running = this.inFlight.get(conn.id);
    if (running) return running;
    const work = this.doRefresh(conn, now).finally(() => this.inFlight.delete(conn.id));
    this.inFlight.set(conn.id, work);
    return work;
  }

  private async doRefresh(conn: Connection, now: Date): Promise<Snapshot> {
    const { store, provider, sealer } = this.deps;
    const range = snapshotRange(now, this.opts.snapshotDays);
    try {
      const access = accessFor(conn, sealer);
      // The marker is read before the events: a change landing in between shows up as a new marker next time.
      const marker = await provider.changeMarker(access);
      const current = await store.getSnapshot(conn);
      let snapshot: Snapshot;
      if (current && marker !== null && marker === current.changeMarker && covers(current.range, range)) {
        await store.touchSnapshot(conn, now);
        snapshot = { ...current, fetchedAt: now };
      } else {
        const events = await provider.listEvents(access, providerWindow(range));
        snapshot = { connectionId: conn.id, range, fetchedAt: now, changeMarker: marker, items: busyItemsFrom(events) };
        await store.saveSnapshot(conn, snapshot);
        // All-day events are placed in the host's zone when read: pick up a changed zone at every
        // full read (at least daily, when the cached range moves).
        await refreshHostDetails(this.deps, conn);
      }
      await noteProviderSuccess(store, conn);
      return snapshot;
    } catch (err) {
      if (isProviderError(err)) await noteProviderFailure(store, conn, err);
      throw err;
    }
  }

  /** Leaves out the events this service wrote for this host's Bookings: availability blocks those itself. */
  private async answer(conn: Connection, items: readonly BusyItem[], snapshotAt: Date, window: Interval): Promise<BusyResponse> {
    let candidates = this.candidates.get(items);
    if (!candidates) {
      candidates = [...new Set(items.map((i) => bookingIdFromUid(i.uid)).filter((id): id is string => id !== null))];
      this.candidates.set(items, candidates);
    }
    const own = candidates.length > 0 ? await this.deps.store.ownBookingIds(conn.workspaceId, conn.hostId, candidates) : new Set<string>();
    const excluded = [...own].sort().join(',');
    let merged = this.merged.get(items);
    if (!merged || merged.timeZone !== conn.hostTimezone || merged.excluded !== excluded) {
      const excludeUids = new Set([...own].map(bookingEventUid));
      const kept = items.filter((i) => !excludeUids.has(i.uid));
      const intervals = mergeIntervals(toIntervals(kept, conn.hostTimezone)).map((i) => ({ ...i, start_at: toTimestamp(i.start), end_at: toTimestamp(i.end) }));
      merged = { timeZone: conn.hostTimezone, excluded, intervals };
      this.merged.set(items, merged);
    }
    return {
      host_id: conn.hostId,
      snapshot_at: toTimestamp(snapshotAt),
      intervals: overlapping(merged.intervals, window).map((i) => ({ start_at: i.start_at, end_at: i.end_at })),
    };
  }
}
