import { DomainError, MS_PER_DAY, toTimestamp, type ListSlotsQuery, type Slot, type SlotCheckResponse } from '@sched/contracts';
import { resolveAvailability, type HostSchedule } from './availability-resolver';
import { bookabilityOf, slotRulesOf, type EventTypeView } from './event-type';
import { addDays, DAY_MS, formatLocal, localDateOf, startOfLocalDate, toWall, wallToDate } from './local-time';
import { findSlotStarts, isCandidateStart, mergeIntervals, overlapsMerged, prepareAvailability, type Interval, type PreparedAvailability, type SlotEngineInput, type SlotRules } from './slot-engine';
import { slotsCacheKey, type SlotsCache, type SlotsCacheTicket } from './slots-cache';

/** Everything the Slots computation reads about one Event Type. */
export interface SlotContext {
  eventType: EventTypeView;
  hostTimezone: string;
  schedule: HostSchedule;
}

/**
 * Where the Slots computation reads from; implemented by store/ (Event Type, booked-interval
 * projection) and the calendar-sync client. Every call is per workspace.
 */
export interface SlotSources {
  loadContext(workspaceId: string, eventTypeId: string): Promise<SlotContext | null>;
  /** Blocked ranges of the host's confirmed Bookings overlapping `range`, but `excludeBookingId`'s. */
  bookedIntervals(workspaceId: string, hostId: string, range: Interval, excludeBookingId?: string): Promise<Interval[]>;
  /**
   * Calendar busy time overlapping `range`, or `not_connected` when calendar-sync has no connection
   * for the host. Throws DomainError calendar_unavailable when it cannot be read (fail closed).
   */
  calendarBusy(workspaceId: string, hostId: string, range: Interval): Promise<Interval[] | 'not_connected'>;
}

type Starts = number[] | 'not_connected';

/** The engine's first pass over a range: its input without busy time, and the starts that are candidates. */
interface Candidates {
  input: SlotEngineInput;
  starts: number[];
  /** The span the candidates' blocked ranges can touch: all the busy time that can matter. */
  busyRange: Interval;
}

function candidatesOf(ctx: SlotContext, range: Interval, now: number): Candidates | null {
  const rules = slotRulesOf(ctx.eventType);
  const first = Math.max(range.start, now + rules.minimumNoticeMs);
  const last = Math.min(range.end - 1, now + rules.maximumAdvanceMs);
  if (first > last) return null;
  // Host dates whose intervals can hold a start in [first, last] or the meeting that follows it.
  const tz = ctx.hostTimezone;
  const availability = resolveAvailability(ctx.schedule, tz, addDays(localDateOf(tz, first), -1), addDays(localDateOf(tz, last + rules.durationMs), 1));
  const input: SlotEngineInput = { ...rules, availability, busy: [], now, window: range };
  const starts = findSlotStarts(input);
  if (starts.length === 0) return null;
  const busyRange = { start: starts[0]! - rules.bufferBeforeMs, end: starts[starts.length - 1]! + rules.durationMs + rules.bufferAfterMs };
  return { input, starts, busyRange };
}

/**
 * Slot starts of `ctx` in `range`. The engine first runs without busy time: when no start is even a
 * candidate, neither calendar-sync nor the projection is asked. Otherwise busy time is read for just
 * the span the candidates' blocked ranges can touch, and the engine runs again.
 */
async function slotStarts(sources: SlotSources, workspaceId: string, ctx: SlotContext, range: Interval, now: number, excludeBookingId?: string): Promise<Starts> {
  const candidates = candidatesOf(ctx, range, now);
  if (!candidates) return [];
  const hostId = ctx.eventType.hostId;
  const { input, busyRange } = candidates;
  const [calendar, booked] = await Promise.all([
    sources.calendarBusy(workspaceId, hostId, busyRange),
    sources.bookedIntervals(workspaceId, hostId, busyRange, excludeBookingId),
  ]);
  if (calendar === 'not_connected') return 'not_connected';
  return findSlotStarts({ ...input, busy: calendar.length === 0 ? booked : booked.concat(calendar) });
}

const notBookable = () => new DomainError('event_type_not_bookable');

interface SlotsAnswer {
  slots: Slot[];
  hostId: string;
  /** When time alone changes the answer: its first slot falls inside the minimum notice. */
  changesAt: number;
}

async function computeSlots(sources: SlotSources, workspaceId: string, eventTypeId: string, query: ListSlotsQuery, now: Date): Promise<SlotsAnswer> {
  const ctx = await sources.loadContext(workspaceId, eventTypeId);
  if (!ctx) throw new DomainError('not_found');
  if (!bookabilityOf(ctx.eventType).bookable) throw notBookable();
  const window = { start: startOfLocalDate(query.timezone, query.from), end: startOfLocalDate(query.timezone, addDays(query.to, 1)) };
  const starts = await slotStarts(sources, workspaceId, ctx, window, now.getTime());
  if (starts === 'not_connected') throw notBookable();
  const rules = slotRulesOf(ctx.eventType);
  const slots = starts.map((start) => {
    const end = start + rules.durationMs;
    return {
      start_at: toTimestamp(new Date(start)),
      end_at: toTimestamp(new Date(end)),
      local_start_at: formatLocal(query.timezone, start),
      local_end_at: formatLocal(query.timezone, end),
      timezone: query.timezone,
    };
  });
  return { slots, hostId: ctx.eventType.hostId, changesAt: starts.length > 0 ? starts[0]! - rules.minimumNoticeMs : Number.POSITIVE_INFINITY };
}

/** GET /v1/event-types/{id}/slots: the local dates [from, to] in `timezone`, ascending by start. */
export async function listSlots(sources: SlotSources, workspaceId: string, eventTypeId: string, query: ListSlotsQuery, now: Date): Promise<Slot[]> {
  return (await computeSlots(sources, workspaceId, eventTypeId, query, now)).slots;
}

/** An answer being computed, for the requests that arrive meanwhile with the same key. */
interface SlotsFlight {
  ticket: SlotsCacheTicket;
  answer: Promise<{ json: Buffer; hostId: string; changesAt: number }>;
}

/** Per cache (one per process): the answers being computed, by cache key. */
const flights = new WeakMap<SlotsCache, Map<string, SlotsFlight>>();

/**
 * The answer `cache` holds for this query now (the UTF-8 bytes of its Slot array's JSON text), or
 * undefined: listSlotsJson's cache hit, without a promise, for a caller that answers a hit at once.
 */
export function cachedSlotsJson(cache: SlotsCache, workspaceId: string, eventTypeId: string, query: ListSlotsQuery, now: Date): Buffer | undefined {
  return cache.get(slotsCacheKey(workspaceId, eventTypeId, query.from, query.to, query.timezone), now.getTime());
}

/**
 * The same answer as listSlots, as the UTF-8 bytes of its Slot array's JSON text (what a cache hit
 * sends as it is, without encoding it again), from `cache` when it holds a valid one. Errors (unknown or unbookable Event Type, calendar unavailable) are never cached.
 *
 * When an answer expires under load, every request for it would otherwise compute it at once. A
 * request that finds the same key being computed joins that computation instead, when its answer is
 * one the cache would serve to this request had it been stored already: nothing invalidated since its
 * ticket (cache.stillValid) and this request's time before the answer's own expiry (its first slot
 * entering the minimum notice). Otherwise it computes its own. A joined computation's error is this
 * request's too, as it would be had it computed at the same moment.
 */
export async function listSlotsJson(cache: SlotsCache, sources: SlotSources, workspaceId: string, eventTypeId: string, query: ListSlotsQuery, now: Date): Promise<Buffer> {
  const key = slotsCacheKey(workspaceId, eventTypeId, query.from, query.to, query.timezone);
  const at = now.getTime();
  const hit = cache.get(key, at);
  if (hit !== undefined) return hit;

  let inFlight = flights.get(cache);
  if (!inFlight) flights.set(cache, (inFlight = new Map()));
  const running = inFlight.get(key);
  if (running && cache.stillValid(running.ticket, at)) {
    const shared = await running.answer;
    if (at < shared.changesAt) return shared.json;
  }

  const ticket = cache.ticket(key, at);
  const flight: SlotsFlight = {
    ticket,
    answer: computeSlots(sources, workspaceId, eventTypeId, query, now).then((a) => ({ json: Buffer.from(JSON.stringify(a.slots), 'utf8'), hostId: a.hostId, changesAt: a.changesAt })),
  };
  inFlight.set(key, flight);
  try {
    const answer = await flight.answer;
    cache.put(ticket, answer.hostId, answer.json, answer.changesAt, at);
    return answer.json;
  } finally {
    if (inFlight.get(key) === flight) inFlight.delete(key);
  }
}

export interface SlotCheckInput {
  eventTypeId: string;
  startAt: Date;
  excludeBookingId?: string;
}

/**
 * The booking service's check at create and reschedule: is `startAt` exactly a start the Slots query
 * would return now? Same engine, same inputs, a window of one millisecond.
 */
export async function checkSlot(sources: SlotSources, workspaceId: string, input: SlotCheckInput, now: Date): Promise<SlotCheckResponse> {
  const ctx = await sources.loadContext(workspaceId, input.eventTypeId);
  if (!ctx) return { bookable: false, reason: 'not_found' };
  if (!bookabilityOf(ctx.eventType).bookable) return { bookable: false, reason: 'event_type_not_bookable' };
  const start = input.startAt.getTime();
  const starts = await slotStarts(sources, workspaceId, ctx, { start, end: start + 1 }, now.getTime(), input.excludeBookingId);
  if (starts === 'not_connected') return { bookable: false, reason: 'event_type_not_bookable' };
  return answerOf(ctx, slotRulesOf(ctx.eventType), start, starts[0] === start);
}

function answerOf(ctx: SlotContext, rules: SlotRules, start: number, bookable: boolean): SlotCheckResponse {
  if (!bookable) return { bookable: false, reason: 'slot_unavailable' };
  const end = start + rules.durationMs;
  return {
    bookable: true,
    event_type_id: ctx.eventType.id,
    host_id: ctx.eventType.hostId,
    start_at: toTimestamp(new Date(start)),
    end_at: toTimestamp(new Date(end)),
    blocked_from: toTimestamp(new Date(start - rules.bufferBeforeMs)),
    blocked_to: toTimestamp(new Date(end + rules.bufferAfterMs)),
    meeting_type: ctx.eventType.meetingType,
  };
}

/** One check's answer, or the DomainError calendar_unavailable its calendar's busy time met. */
export type SlotCheckOutcome = SlotCheckResponse | DomainError;

/** A check that needs busy time: its start, its Event Type, and its blocked range (the span it needs read). */
interface PendingCheck {
  index: number;
  ctx: SlotContext;
  rules: SlotRules;
  start: number;
  /** [start − buffer_before, start + duration + buffer_after): the busy time that can refuse it. */
  busyRange: Interval;
  excludeBookingId?: string;
}

/** One Event Type of a batch: its rules, and the availability of the host dates its checks need, resolved once. */
interface BatchEventType {
  ctx: SlotContext;
  rules: SlotRules;
  /** The host's local dates its checks need, as day numbers (wall midnight ÷ one day). */
  days: Set<number>;
  availability?: PreparedAvailability;
}

const spanOf = (ranges: readonly Interval[]): Interval => ({ start: Math.min(...ranges.map((r) => r.start)), end: Math.max(...ranges.map((r) => r.end)) });

/** The host's local date of `instant`, as a day number (localDateOf without the text). */
const localDayOf = (timeZone: string, instant: number): number => Math.floor(toWall(timeZone, instant) / DAY_MS);

/** The schedule's intervals on the given local dates (day numbers): resolveAvailability once per run of consecutive dates. */
function availabilityOnDays(ctx: SlotContext, days: ReadonlySet<number>): Interval[] {
  const sorted = [...days].sort((a, b) => a - b);
  const out: Interval[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(...resolveAvailability(ctx.schedule, ctx.hostTimezone, wallToDate(sorted[i]! * DAY_MS), wallToDate(sorted[j]! * DAY_MS)));
    i = j + 1;
  }
  return out;
}

/**
 * The reads a group of checks shares: the checks of one host whose busy spans touch the same UTC days.
 * Joining checks of other days would ask calendar-sync for days none of them needs, outside the busy
 * copies it keeps per host and UTC days (http/calendar-busy-cache.ts), and could reach past its
 * snapshot's range (whole UTC days), where it reads the provider instead.
 */
function readGroupOf(hostId: string, range: Interval): string {
  const from = Math.floor(range.start / MS_PER_DAY);
  const to = Math.max(Math.ceil(range.end / MS_PER_DAY), from + 1);
  return `${hostId}\u0000${from}\u0000${to}`;
}

/**
 * checkSlot for several checks of one workspace at once (the booking service's concurrent creates and
 * reschedules, one call: issue 18), answering in order exactly what checkSlot answers for each alone,
 * with the reads shared: each Event Type's context once; per host and UTC days (readGroupOf) one
 * calendar busy read and one booked-interval read over the span all of its checks need. A check with
 * `excludeBookingId` reads the projection on its own, since the shared read cannot tell whose blocked
 * range is whose.
 *
 * The work is per checked start, not per day: each Event Type's availability is resolved once for the
 * batch, over the host dates its checks need (those checkSlot resolves for each, candidatesOf), and
 * each read's busy time is merged once; then each start is one test of the definition at that start
 * (isCandidateStart, overlapsMerged), not a walk of the grid. test/check-slots.test.ts compares the
 * answers with checkSlot's full computation on random batches.
 *
 * Failures: a calendar that cannot be read (DomainError calendar_unavailable) fails only the checks
 * of its read group, as that check's outcome; not connected answers them event_type_not_bookable, as
 * checkSlot does. Anything else (the store down) fails the whole batch, as it fails checkSlot.
 */
export async function checkSlots(sources: SlotSources, workspaceId: string, inputs: readonly SlotCheckInput[], now: Date): Promise<SlotCheckOutcome[]> {
  const at = now.getTime();
  const ids = [...new Set(inputs.map((i) => i.eventTypeId))];
  const contexts = new Map(await Promise.all(ids.map(async (id) => [id, await sources.loadContext(workspaceId, id)] as const)));

  const outcomes: SlotCheckOutcome[] = new Array<SlotCheckOutcome>(inputs.length);
  // First the answers that need no availability, and the host dates the others need.
  const types = new Map<string, BatchEventType>();
  const toTest: Array<{ index: number; type: BatchEventType; start: number; excludeBookingId?: string }> = [];
  for (const [index, check] of inputs.entries()) {
    const ctx = contexts.get(check.eventTypeId) ?? null;
    if (!ctx) {
      outcomes[index] = { bookable: false, reason: 'not_found' };
      continue;
    }
    if (!bookabilityOf(ctx.eventType).bookable) {
      outcomes[index] = { bookable: false, reason: 'event_type_not_bookable' };
      continue;
    }
    let type = types.get(check.eventTypeId);
    if (!type) types.set(check.eventTypeId, (type = { ctx, rules: slotRulesOf(ctx.eventType), days: new Set() }));
    const { rules } = type;
    const start = check.startAt.getTime();
    if (start < at + rules.minimumNoticeMs || start > at + rules.maximumAdvanceMs) {
      outcomes[index] = answerOf(ctx, rules, start, false);
      continue;
    }
    // The dates candidatesOf resolves for this start: those whose intervals can hold it or the meeting that follows, and one either side.
    const tz = ctx.hostTimezone;
    const lastDay = localDayOf(tz, start + rules.durationMs) + 1;
    for (let day = localDayOf(tz, start) - 1; day <= lastDay; day++) type.days.add(day);
    toTest.push({ index, type, start, excludeBookingId: check.excludeBookingId });
  }
  for (const type of types.values()) type.availability = prepareAvailability(availabilityOnDays(type.ctx, type.days));

  const groups = new Map<string, PendingCheck[]>();
  for (const { index, type, start, excludeBookingId } of toTest) {
    const { ctx, rules } = type;
    if (!isCandidateStart(type.availability!, rules, at, start)) {
      outcomes[index] = answerOf(ctx, rules, start, false);
      continue;
    }
    const busyRange = { start: start - rules.bufferBeforeMs, end: start + rules.durationMs + rules.bufferAfterMs };
    const pending: PendingCheck = { index, ctx, rules, start, busyRange, excludeBookingId };
    const key = readGroupOf(ctx.eventType.hostId, busyRange);
    const group = groups.get(key);
    if (group) group.push(pending);
    else groups.set(key, [pending]);
  }

  await Promise.all([...groups.values()].map((group) => answerGroup(sources, workspaceId, group, outcomes)));
  return outcomes;
}

async function answerGroup(sources: SlotSources, workspaceId: string, group: PendingCheck[], outcomes: SlotCheckOutcome[]): Promise<void> {
  const hostId = group[0]!.ctx.eventType.hostId;
  const shared = group.filter((c) => c.excludeBookingId === undefined);
  const own = group.filter((c) => c.excludeBookingId !== undefined);
  const calendarRead = sources.calendarBusy(workspaceId, hostId, spanOf(group.map((c) => c.busyRange)));
  const sharedRead = shared.length > 0 ? sources.bookedIntervals(workspaceId, hostId, spanOf(shared.map((c) => c.busyRange))) : Promise.resolve([]);
  const ownReads = own.map((c) => sources.bookedIntervals(workspaceId, hostId, c.busyRange, c.excludeBookingId));
  // Every read settles before the group answers: none is left to reject unheard.
  const [[calendarSettled], bookedReads] = await Promise.all([Promise.allSettled([calendarRead]), Promise.allSettled([sharedRead, ...ownReads])]);
  const calendar = calendarSettled!;
  // The store (or anything unforeseen) failing fails the batch, as it fails checkSlot.
  const booked: Interval[][] = [];
  for (const read of bookedReads) {
    if (read.status === 'rejected') throw read.reason;
    booked.push(read.value);
  }
  if (calendar.status === 'rejected') {
    if (!(calendar.reason instanceof DomainError && calendar.reason.code === 'calendar_unavailable')) throw calendar.reason;
    for (const c of group) outcomes[c.index] = calendar.reason;
    return;
  }
  const busyCalendar = calendar.value;
  if (busyCalendar === 'not_connected') {
    for (const c of group) outcomes[c.index] = { bookable: false, reason: 'event_type_not_bookable' };
    return;
  }
  // Each read's busy time merged once; a start is refused when its blocked range overlaps it (what the
  // engine's busy rule refuses, given the intervals overlapping that range).
  const answer = (c: PendingCheck, busy: readonly Interval[]) => {
    outcomes[c.index] = answerOf(c.ctx, c.rules, c.start, !overlapsMerged(busy, c.busyRange));
  };
  if (shared.length > 0) {
    const busy = mergeIntervals(booked[0]!.concat(busyCalendar));
    for (const c of shared) answer(c, busy);
  }
  own.forEach((c, i) => answer(c, mergeIntervals(booked[i + 1]!.concat(busyCalendar))));
}
