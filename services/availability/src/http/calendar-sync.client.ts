import { busyResponseSchema, DomainError, parseRetryAfterSeconds, toTimestamp } from '@sched/contracts';
import { onBehalfOf, UpstreamError, type InternalClient } from '@sched/http';
import type { Logger } from '@sched/logger';
import type { SlotSources } from '../domain/find-slots';
import type { Interval } from '../domain/slot-engine';

/** Retry-After when calendar-sync gives none (or cannot be reached): the snapshot refresh is quick. */
export const DEFAULT_CALENDAR_RETRY_AFTER_SECONDS = 5;

/** calendar-sync's Retry-After when it is between 1 s and an hour, else the default. */
function retryAfterOf(header: string | string[] | undefined): number {
  const seconds = parseRetryAfterSeconds(header);
  return seconds !== undefined && seconds >= 1 && seconds <= 3600 ? seconds : DEFAULT_CALENDAR_RETRY_AFTER_SECONDS;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (s.charCodeAt(i) - 48);
  return n;
}

/**
 * Epoch ms of a timestamp already matched against timestampSchema (`YYYY-MM-DDTHH:MM:SS.mmmZ`), or
 * null for an impossible date or time. A busy answer holds a thousand of them; this is several
 * times cheaper than the general parseTimestamp, which also accepts other input forms.
 */
export function instantOfTimestamp(ts: string): number | null {
  const y = digits(ts, 0, 4);
  const mo = digits(ts, 5, 7);
  const d = digits(ts, 8, 10);
  const h = digits(ts, 11, 13);
  const mi = digits(ts, 14, 16);
  const sec = digits(ts, 17, 19);
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return null;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!)) return null;
  return Date.UTC(y, mo - 1, d, h, mi, sec, digits(ts, 20, 23));
}

const unavailable = (retryAfterSeconds = DEFAULT_CALENDAR_RETRY_AFTER_SECONDS) => new DomainError('calendar_unavailable', { retryAfterSeconds });

/**
 * Reads busy time from calendar-sync's internal API (contracts internal.ts). It applies the freshness
 * bound and leaves out the events it wrote for Bookings. Fail closed (api-v1.md rule 5): a 503, any
 * other unexpected answer, a malformed body, a timeout or no connection at all is 503
 * calendar_unavailable; 404 means the host has no calendar connection.
 */
export function createCalendarBusyReader(client: InternalClient, logger: Pick<Logger, 'warn'>): SlotSources['calendarBusy'] {
  return async (workspaceId: string, hostId: string, range: Interval) => {
    const path = `/internal/v1/workspaces/${encodeURIComponent(workspaceId)}/hosts/${encodeURIComponent(hostId)}/busy`;
    let res;
    try {
      res = await client.request<{ data?: unknown }>('GET', path, {
        searchParams: { from: toTimestamp(new Date(range.start)), to: toTimestamp(new Date(range.end)) },
        onBehalf: onBehalfOf({ workspaceId }),
      });
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      logger.warn('calendar-sync busy times unreachable; failing closed', { kind: err.kind });
      throw unavailable();
    }
    if (res.status === 404) return 'not_connected';
    if (res.status === 503) throw unavailable(retryAfterOf(res.headers['retry-after']));
    if (res.status !== 200) {
      logger.warn('calendar-sync busy times answered unexpectedly; failing closed', { status: res.status });
      throw unavailable();
    }
    const parsed = busyResponseSchema.safeParse(res.body?.data);
    if (!parsed.success) {
      logger.warn('calendar-sync busy times malformed; failing closed', { status: res.status });
      throw unavailable();
    }
    const intervals: Interval[] = [];
    for (const iv of parsed.data.intervals) {
      const start = instantOfTimestamp(iv.start_at);
      const end = instantOfTimestamp(iv.end_at);
      if (start === null || end === null) {
        logger.warn('calendar-sync busy times hold an impossible timestamp; failing closed', { status: res.status });
        throw unavailable();
      }
      intervals.push({ start, end });
    }
    return intervals;
  };
}
