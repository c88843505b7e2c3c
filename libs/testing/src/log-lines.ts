import { waitFor, type WaitForOptions } from './wait-for';

export type LogEntry = Record<string, unknown>;

/** The JSON entries among captured log output (a chunk may hold several lines; other text is skipped). */
export function logEntries(lines: readonly string[]): LogEntry[] {
  const out: LogEntry[] = [];
  for (const chunk of lines) {
    for (const line of chunk.split('\n')) {
      if (!line.trim().startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogEntry);
      } catch {
        // not one of the logger's lines
      }
    }
  }
  return out;
}

const matches = (entry: LogEntry, match: LogEntry) => Object.entries(match).every(([k, v]) => entry[k] === v);

export interface LogWaitOptions extends WaitForOptions {
  /** Only lines from this index of the captured array on (its length before the step under test). */
  from?: number;
}

/**
 * Waits until a service has logged `count` entries (default 1) that carry every field of `match`,
 * e.g. `{ message: 'event handled', event_id }`: a signal the service gives once the work is done.
 * Resolves with those entries.
 */
export async function waitForLog(lines: readonly string[], match: LogEntry, opts: LogWaitOptions & { count?: number } = {}): Promise<LogEntry[]> {
  const count = opts.count ?? 1;
  try {
    return await waitFor(() => {
      const found = logEntries(lines.slice(opts.from ?? 0)).filter((e) => matches(e, match));
      return found.length >= count ? found : null;
    }, opts);
  } catch (err) {
    throw new Error(`no ${count} log entries with ${JSON.stringify(match)}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Waits until a service's message consumer (@sched/messaging) is done with each of these events,
 * from its own log lines: handled (its effect committed) or skipped as a duplicate. The consumer
 * logs them at debug level, so the service's logger must be at debug. An event the consumer's
 * `accepts` filter refuses is acked without a line: prove those by a later marker event instead.
 * Give `from` (the line count before publishing) when an id may have been handled before.
 */
export async function waitForEventsHandled(lines: readonly string[], eventIds: readonly string[], opts: LogWaitOptions = {}): Promise<void> {
  const done = (e: LogEntry) => e.message === 'event handled' || e.message === 'duplicate event skipped';
  try {
    await waitFor(() => {
      const seen = new Map<string, number>();
      for (const e of logEntries(lines.slice(opts.from ?? 0))) if (done(e) && typeof e.event_id === 'string') seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
      // An id listed twice (a message and its redelivery) needs two lines.
      const wanted = new Map<string, number>();
      for (const id of eventIds) wanted.set(id, (wanted.get(id) ?? 0) + 1);
      return [...wanted].every(([id, n]) => (seen.get(id) ?? 0) >= n);
    }, opts);
  } catch (err) {
    throw new Error(`the consumer did not finish events ${eventIds.join(', ')}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * What a process stopped on shutdown, in order: the closers its lifecycle ran (`stopped` lines), which
 * name what the setup started (e.g. 'outbox relay', 'booking consumer'). Deterministic proof of what a
 * process ran, read after its stop.
 */
export function stoppedClosers(lines: readonly string[]): string[] {
  return logEntries(lines)
    .filter((e) => e.message === 'stopped' && typeof e.closer === 'string')
    .map((e) => e.closer as string);
}
