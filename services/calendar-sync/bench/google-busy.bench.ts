// Busy reads from Google Calendar, which call is cheaper: events.list (singleEvents, the fields the
// adapter asks for) as GoogleCalendarProvider reads, freeBusy.query, and the change-marker probe;
// and the syncToken alternative: a full sync (no time bounds: the whole calendar, history included),
// then incremental reads with nothing changed and after one change, beside today's probe + window read.
// Against the local fake (libs/testing/src/providers/fake-google.ts), so the figures are requests and response bytes
// per read (what Google's quota and the network see) plus the client-side time on this machine;
// Google's own server time is not measured here.
// Run: node --import tsx services/calendar-sync/bench/google-busy.bench.ts
import { calendar } from '@googleapis/calendar';
import { GoogleCalendarProvider } from '../src/providers/google/google-provider';
import { GoogleOAuth } from '../src/providers/google/oauth';
import { startFakeGoogle } from '@sched/testing';

const SINGLES = 300;
/** Past events outside the window (two years of history, ~10 a week): a full sync reads them, a window read does not. */
const PAST_SINGLES = 1000;
const WEEKLY_SERIES = 30;
const ROUNDS = 15;
const DAY = 86_400_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const google = await startFakeGoogle();
  try {
    const account = 'bench@example.com';
    const refreshToken = google.issueRefreshToken(account);
    const start = Date.UTC(2026, 11, 1);
    // Singles spread over 92 days (one in ten all-day), plus weekly series expanded by the server.
    for (let i = 0; i < SINGLES; i++) {
      const s = new Date(start + Math.floor((i * 92 * DAY) / SINGLES) + 9 * 3_600_000);
      if (i % 10 === 0) google.addEvent(account, { summary: `all day ${i}`, start: { date: s.toISOString().slice(0, 10) }, end: { date: new Date(s.getTime() + DAY).toISOString().slice(0, 10) } });
      else google.addEvent(account, { summary: `meeting ${i}`, description: 'x'.repeat(200), start: { dateTime: s.toISOString() }, end: { dateTime: new Date(s.getTime() + 3_600_000).toISOString() } });
    }
    for (let i = 0; i < PAST_SINGLES; i++) {
      const s = new Date(start - 2 * DAY - Math.floor((i * 730 * DAY) / PAST_SINGLES) + 10 * 3_600_000);
      google.addEvent(account, { summary: `past ${i}`, description: 'x'.repeat(200), start: { dateTime: s.toISOString() }, end: { dateTime: new Date(s.getTime() + 3_600_000).toISOString() } });
    }
    for (let i = 0; i < WEEKLY_SERIES; i++) {
      const s = new Date(start - 30 * DAY + i * 3_600_000);
      google.addEvent(account, { summary: `series ${i}`, start: { dateTime: s.toISOString() }, end: { dateTime: new Date(s.getTime() + 1_800_000).toISOString() }, recurrence: ['RRULE:FREQ=WEEKLY;COUNT=30'] });
    }
    const oauth = new GoogleOAuth({ clientId: google.clientId, clientSecret: google.clientSecret, endpoints: google.endpoints, timeoutMs: 5000 });
    const { accessToken } = await oauth.refresh(refreshToken);
    const tokens = { accessToken: async () => accessToken, refreshed: async () => accessToken };
    const provider = new GoogleCalendarProvider({ tokens, timeoutMs: 10_000, rootUrl: google.rootUrl });
    const api = calendar({ version: 'v3', rootUrl: google.rootUrl, retry: false });
    const access = { provider: 'google' as const, url: '', username: account, password: refreshToken, calendarUrl: account };
    const window = { from: new Date(start - DAY), to: new Date(start + 91 * DAY) };

    const measure = async (endpoint: string, read: () => Promise<unknown>) => {
      const times: number[] = [];
      const calls0 = google.count(endpoint);
      const bytes0 = google.bytes[endpoint] ?? 0;
      for (let i = 0; i < ROUNDS; i++) {
        const t = process.hrtime.bigint();
        await read();
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return {
        requests_per_read: (google.count(endpoint) - calls0) / ROUNDS,
        response_bytes_per_read: Math.round(((google.bytes[endpoint] ?? 0) - bytes0) / ROUNDS),
        median_ms: Number(median(times).toFixed(2)),
      };
    };

    const headers = { authorization: `Bearer ${accessToken}` };
    // What an incremental reader would ask for: the adapter's fields plus the recurrence of a series (not expanded without time bounds).
    const SYNC_FIELDS = 'nextPageToken,nextSyncToken,items(id,status,transparency,start,end,recurrence,recurringEventId,originalStartTime,attendees(self,responseStatus))';
    /** Every page of one events.list read; its requests and response bytes, and the sync token it ends with. */
    const syncRead = async (params: { syncToken?: string }) => {
      const calls0 = google.count('events.list');
      const bytes0 = google.bytes['events.list'] ?? 0;
      let pageToken: string | undefined;
      let items = 0;
      for (;;) {
        const { data } = await api.events.list({ calendarId: account, maxResults: 2500, fields: SYNC_FIELDS, pageToken, ...params }, { headers });
        items += data.items?.length ?? 0;
        if (data.nextPageToken) pageToken = data.nextPageToken;
        else return { token: data.nextSyncToken!, requests: google.count('events.list') - calls0, response_bytes: (google.bytes['events.list'] ?? 0) - bytes0, items };
      }
    };
    /** Today's refresh after a change: the marker probe, then the whole window read again. */
    const probeAndWindow = async () => {
      const calls0 = google.count('events.list');
      const bytes0 = google.bytes['events.list'] ?? 0;
      await provider.changeMarker(access);
      await provider.listEvents(access, window);
      return { requests: google.count('events.list') - calls0, response_bytes: (google.bytes['events.list'] ?? 0) - bytes0 };
    };
    const syncTokenReads = async () => {
      const full = await syncRead({});
      const unchanged = await syncRead({ syncToken: full.token });
      // One event of the window moves (a host reschedules a meeting by hand).
      const moved = google.events(account).find((e) => e.summary === 'meeting 5')!;
      await api.events.patch({ calendarId: account, eventId: moved.id, requestBody: { start: { dateTime: new Date(Date.parse(moved.start.dateTime) + 3_600_000).toISOString() }, end: { dateTime: new Date(Date.parse(moved.end.dateTime) + 3_600_000).toISOString() } } }, { headers });
      const oneChange = await syncRead({ syncToken: unchanged.token });
      const today = await probeAndWindow();
      const strip = ({ token: _t, ...rest }: Awaited<ReturnType<typeof syncRead>>) => rest;
      return {
        sync_token: { full_sync: strip(full), incremental_unchanged: strip(unchanged), incremental_after_one_change: strip(oneChange) },
        today_after_one_change: today,
      };
    };

    const events = await provider.listEvents(access, window);
    const result = {
      calendar: { singles: SINGLES, past_singles: PAST_SINGLES, weekly_series: WEEKLY_SERIES, occurrences_in_window: events.length, window_days: 92 },
      events_list: await measure('events.list', () => provider.listEvents(access, window)),
      free_busy: await measure('freeBusy', () =>
        api.freebusy.query({ requestBody: { timeMin: window.from.toISOString(), timeMax: window.to.toISOString(), items: [{ id: account }] } }, { headers: { authorization: `Bearer ${accessToken}` } }),
      ),
      change_marker: await measure('events.list', () => provider.changeMarker(access)),
      ...(await syncTokenReads()),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await google.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
