// What the calendar-sync benchmarks share: one host of the availability stub whose Radicale calendar holds
// `events` 45-minute events over the cached range, connected to calendar-sync through its admin API.
import { newId } from '@sched/contracts';
import type { TestRadicale } from '@sched/testing';
import { at, busyPath, call, icalTime, vcalendar, vevent, type startAvailabilityStub } from '../test/support/harness';

export async function seedConnectedCalendar(opts: {
  svcUrl: string;
  radicale: TestRadicale;
  availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
  /** Radicale user and password (the user must exist in `radicale`). */
  user: string;
  password: string;
  events: number;
  /** Every n-th event is a weekly series of 12 (expanded by the busy read); none when omitted. */
  weeklyEvery?: number;
}): Promise<{ ws: string; hostId: string; busyPath: string }> {
  const ws = newId('wsp');
  const host = opts.availability.addHost(ws);
  await opts.radicale.makeCalendar(opts.user, 'bench');
  for (let i = 0; i < opts.events; i++) {
    const start = at(1 + (i % 80), 8 + (i % 9));
    const rule: Record<string, string> = opts.weeklyEvery !== undefined && i % opts.weeklyEvery === 0 ? { RRULE: 'FREQ=WEEKLY;COUNT=12' } : {};
    await opts.radicale.putObject(
      opts.user,
      'bench',
      `e${i}.ics`,
      vcalendar(vevent({ UID: `e${i}`, DTSTART: icalTime(start), DTEND: icalTime(new Date(start.getTime() + 45 * 60_000)), ...rule })),
    );
  }
  const put = await call(opts.svcUrl, 'PUT', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`, {
    provider: 'caldav',
    url: opts.radicale.url,
    username: opts.user,
    password: opts.password,
    calendar_url: `${opts.radicale.url}/${opts.user}/bench/`,
  });
  if (put.status !== 201) throw new Error(`connect failed: ${put.status}`);
  return { ws, hostId: host.id, busyPath: busyPath(ws, host.id, at(1), at(31)) };
}
