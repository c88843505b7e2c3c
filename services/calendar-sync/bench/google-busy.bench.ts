// Busy reads from Google Calendar, which call is cheaper: events.list (singleEvents, the fields the
// adapter asks for) as GoogleCalendarProvider reads, freeBusy.query, and the change-marker probe.
// Against the local fake (libs/testing/src/providers/fake-google.ts), so the figures are requests and response bytes
// per read (what Google's quota and the network see) plus the client-side time on this machine;
// Google's own server time is not measured here.
// Run: node --import tsx services/calendar-sync/bench/google-busy.bench.ts
import { calendar } from '@googleapis/calendar';
import { GoogleCalendarProvider } from '../src/providers/google/google-provider';
import { GoogleOAuth } from '../src/providers/google/oauth';
import { startFakeGoogle } from '@sched/testing';

const SINGLES = 300;
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

    const events = await provider.listEvents(access, window);
    const result = {
      calendar: { singles: SINGLES, weekly_series: WEEKLY_SERIES, occurrences_in_window: events.length, window_days: 92 },
      events_list: await measure('events.list', () => provider.listEvents(access, window)),
      free_busy: await measure('freeBusy', () =>
        api.freebusy.query({ requestBody: { timeMin: window.from.toISOString(), timeMax: window.to.toISOString(), items: [{ id: account }] } }, { headers: { authorization: `Bearer ${accessToken}` } }),
      ),
      change_marker: await measure('events.list', () => provider.changeMarker(access)),
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
