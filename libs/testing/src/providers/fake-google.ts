import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ICAL from 'ical.js';

/**
 * A local Google: the OAuth 2.0 authorization endpoint (accounts.google.com/o/oauth2/v2/auth: consent
 * is given at once, or refused with `denyConsent`, and the browser redirected to redirect_uri with
 * code + state or error + state), the token endpoint (refresh_token and authorization_code grants,
 * PKCE S256 checked; an id token naming the consenting account when `openid` was asked) and the revoke endpoint (oauth2.googleapis.com/token, /revoke)
 * and the Calendar API v3 endpoints calendar-sync uses (events list/insert/get/patch/delete,
 * freeBusy), over plain HTTP on 127.0.0.1. Shapes follow Google's public reference: resource fields,
 * `{error:{code,message,errors:[{domain,reason,message}],status}}` error bodies, `nextPageToken`
 * paging, `nextSyncToken` and incremental `syncToken` reads (changed and deleted events since; 410
 * fullSyncRequired for a token it did not issue; 400 with time bounds), Retry-After on throttling, event ids in base32hex that stay taken after a delete.
 *
 * Simplifications: one time zone (UTC) for all-day events and recurrence expansion; recurrence
 * = RRULE and EXDATE lines (expanded with ical.js); `fields` is honoured for plain and nested
 * names (`a,b,items(c,d)`), not the `a/b` form; every calendar is shared with every account,
 * with one access role per calendar.
 */

export interface FakeGoogleEvent {
  id?: string;
  summary?: string;
  status?: 'confirmed' | 'tentative' | 'cancelled';
  transparency?: 'opaque' | 'transparent';
  start: { dateTime?: string; date?: string; timeZone?: string };
  end: { dateTime?: string; date?: string; timeZone?: string };
  /** RRULE / EXDATE lines, as Google's `recurrence`. */
  recurrence?: string[];
  attendees?: Array<{ email: string; self?: boolean; responseStatus?: string }>;
  [field: string]: unknown;
}

type Json = Record<string, any>;

interface FakeCalendar {
  accessRole: string;
  meetAllowed: boolean;
  events: Map<string, Json>;
  /** Event id → the calendar etag its last change made (what a sync token is compared with). */
  changedAt: Map<string, number>;
  etag: number;
  updated: string;
}

interface Failure {
  status: number;
  retryAfter?: string;
  reason?: string;
  where: 'calendar' | 'token' | 'any';
}

export interface FakeGoogleCall {
  method: string;
  /** token, revoke, events.list, events.insert, events.get, events.patch, events.delete, freeBusy, unknown */
  endpoint: string;
  path: string;
  query: Record<string, string>;
  at: number;
}

export interface FakeGoogle {
  /** API root for @googleapis/calendar's `rootUrl`, e.g. http://127.0.0.1:1234/ */
  rootUrl: string;
  /** google-auth-library OAuth2Client `endpoints`. */
  endpoints: { oauth2AuthBaseUrl: string; oauth2TokenUrl: string; oauth2RevokeUrl: string };
  /** The next consents are refused (redirect with error=access_denied). */
  denyConsent: boolean;
  /** The account that consents (its primary calendar is created). */
  consentAccount: string;
  clientId: string;
  clientSecret: string;
  /** Lifetime of issued access tokens, seconds (default 3599, as Google). */
  accessTokenTtlSec: number;
  /** Page size cap of events.list (Google: maxResults default 250, at most 2500). */
  pageSize: number | null;
  /** A refresh token for the account (its primary calendar is created, owned by it). */
  issueRefreshToken(account?: string): string;
  /** An access token issued now for the account, as the token endpoint would. */
  issueAccessToken(account?: string): string;
  /** The user revokes the grant (or Google expires it): the token endpoint answers invalid_grant. */
  revokeRefreshToken(refreshToken: string): void;
  /** Every access token issued so far stops working (401), as after expiry. */
  expireAccessTokens(): void;
  isRefreshTokenValid(refreshToken: string): boolean;
  addCalendar(id: string, opts?: { accessRole?: 'owner' | 'writer' | 'reader' | 'freeBusyReader'; meetAllowed?: boolean }): void;
  /** Meet creation answers `pending` instead of `success` (the link comes later). */
  meetPending: boolean;
  addEvent(calendarId: string, event: FakeGoogleEvent): Json;
  /** Stored events of a calendar (masters, deleted ones with status cancelled). */
  events(calendarId: string): Json[];
  event(calendarId: string, id: string): Json | undefined;
  /** The next `times` requests (to `where`) answer `status` with Google's error body. */
  failNext(times: number, failure: { status: number; retryAfter?: string; reason?: string; where?: 'calendar' | 'token' | 'any' }): void;
  /** The next `times` requests are read and never answered (until the client gives up). */
  stallNext(times: number): void;
  calls: FakeGoogleCall[];
  count(endpoint: string): number;
  /** Response bytes sent per endpoint (bodies), for the busy-read measurement. */
  bytes: Record<string, number>;
  /** Stops listening and drops connections: requests are refused, as a host that is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

const BASE32HEX_ID = /^[a-v0-9]{5,1024}$/;
const STATUS_TEXT: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  410: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};
const REASON_MESSAGE: Record<string, string> = {
  rateLimitExceeded: 'Rate Limit Exceeded',
  userRateLimitExceeded: 'User Rate Limit Exceeded',
  quotaExceeded: 'Calendar usage limits exceeded.',
  insufficientPermissions: 'Insufficient Permission: Request had insufficient authentication scopes.',
};
const DEFAULT_REASON: Record<number, [string, string]> = {
  400: ['badRequest', 'Bad Request'],
  403: ['forbidden', 'Forbidden'],
  404: ['notFound', 'Not Found'],
  429: ['rateLimitExceeded', 'Rate Limit Exceeded'],
  500: ['backendError', 'Backend Error'],
  503: ['backendError', 'Backend Error'],
};

function apiError(status: number, reason: string, message: string, extra: Json = {}): Json {
  return { error: { code: status, message, errors: [{ domain: extra.domain ?? 'global', reason, message, ...(extra.location ? { location: extra.location, locationType: extra.locationType } : {}) }], status: STATUS_TEXT[status] ?? 'UNKNOWN' } };
}

const UNAUTHENTICATED = apiError(
  401,
  'authError',
  'Invalid Credentials',
  { location: 'Authorization', locationType: 'header' },
);
UNAUTHENTICATED.error.message =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

const randomId = () =>
  Array.from(randomBytes(20), (b) => '0123456789abcdefghijklmnopqrstuv'[b & 31]).join('');

/** `a,b,items(c,d(e))` → {a:true, b:true, items:{c:true, d:{e:true}}} */
type FieldTree = { [name: string]: true | FieldTree };
function parseFields(text: string): FieldTree {
  let i = 0;
  const list = (): FieldTree => {
    const tree: FieldTree = {};
    while (i < text.length && text[i] !== ')') {
      let name = '';
      while (i < text.length && !',()'.includes(text[i]!)) name += text[i++];
      if (text[i] === '(') {
        i++;
        tree[name.trim()] = list();
        i++; // ')'
      } else tree[name.trim()] = true;
      if (text[i] === ',') i++;
    }
    return tree;
  };
  return list();
}
function pick(value: any, tree: FieldTree): any {
  if (Array.isArray(value)) return value.map((v) => pick(v, tree));
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, sub] of Object.entries(tree)) if (k in value) out[k] = sub === true ? value[k] : pick(value[k], sub);
  return out;
}

/** RFC 7396-style merge, as Google's patch semantics: objects merge, arrays and scalars replace, null clears. */
function mergePatch(target: Json, patch: Json): Json {
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof out[k] === 'object' && out[k] && !Array.isArray(out[k])) out[k] = mergePatch(out[k], v);
    else out[k] = v;
  }
  return out;
}

function instant(t: { dateTime?: string; date?: string }): number {
  return t.dateTime ? Date.parse(t.dateTime) : Date.parse(`${t.date}T00:00:00Z`);
}

const basic = (d: Date) => d.toISOString().slice(0, 19).replace(/[-:]/g, '') + 'Z';

/** Occurrences of a master (RRULE + EXDATE in UTC), as instances with Google's instance ids. */
function expand(master: Json, from: number, to: number): Json[] {
  const rrule = (master.recurrence as string[]).find((l) => l.startsWith('RRULE:'));
  if (!rrule) return [master];
  const allDay = Boolean(master.start.date);
  const exdates = new Set<string>();
  for (const line of master.recurrence as string[]) {
    if (!line.startsWith('EXDATE')) continue;
    for (const v of line.slice(line.indexOf(':') + 1).split(',')) exdates.add(v.trim());
  }
  const start = instant(master.start);
  const duration = instant(master.end) - start;
  const dtstart = allDay ? ICAL.Time.fromDateString(master.start.date) : ICAL.Time.fromJSDate(new Date(start), true);
  const it = ICAL.Recur.fromString(rrule.slice('RRULE:'.length)).iterator(dtstart);
  const out: Json[] = [];
  for (let next = it.next(), n = 0; next && n < 20000; next = it.next(), n++) {
    const s = allDay ? Date.parse(`${next.toString()}T00:00:00Z`) : next.toJSDate().getTime();
    if (s >= to) break;
    const e = s + duration;
    const key = allDay ? next.toString().replace(/-/g, '') : basic(new Date(s));
    if (e <= from || exdates.has(key)) continue;
    const when = (ms: number) => (allDay ? { date: new Date(ms).toISOString().slice(0, 10) } : { dateTime: new Date(ms).toISOString(), timeZone: master.start.timeZone ?? 'UTC' });
    const { recurrence: _r, ...rest } = master;
    out.push({ ...rest, id: `${master.id}_${key}`, recurringEventId: master.id, originalStartTime: when(s), start: when(s), end: when(e) });
  }
  return out;
}

export async function startFakeGoogle(opts: { clientId?: string; clientSecret?: string } = {}): Promise<FakeGoogle> {
  const clientId = opts.clientId ?? 'test-client.apps.googleusercontent.com';
  const clientSecret = opts.clientSecret ?? 'test-client-secret';
  const refreshTokens = new Map<string, { account: string; valid: boolean }>();
  /** Authorization codes handed out at consent: single use, bound to client, redirect URI and PKCE challenge. */
  const codes = new Map<string, { account: string; redirectUri: string; challenge: string | null; method: string; offline: boolean; scope: string; used: boolean }>();
  const accessTokens = new Map<string, { account: string; refreshToken: string | null; expiresAt: number }>();
  const calendars = new Map<string, FakeCalendar>();
  const failures: Failure[] = [];
  /** Signs the id tokens of consents that asked for openid (made at the first one). */
  let signingKey: KeyObject | undefined;
  let stalls = 0;
  const calls: FakeGoogleCall[] = [];
  const bytes: Record<string, number> = {};

  const ensureCalendar = (id: string, o: { accessRole?: string; meetAllowed?: boolean } = {}) => {
    if (!calendars.has(id)) calendars.set(id, { accessRole: o.accessRole ?? 'owner', meetAllowed: o.meetAllowed ?? true, events: new Map(), changedAt: new Map(), etag: 1, updated: new Date().toISOString() });
    return calendars.get(id)!;
  };
  /** A change of the calendar (of event `id`): the etag moves on, and the event is remembered as changed at it (sync tokens). */
  const touch = (cal: FakeCalendar, id: string) => {
    cal.etag += 1;
    cal.changedAt.set(id, cal.etag);
    // Strictly increasing even within one millisecond, as a marker must change on every change.
    const now = Math.max(Date.now(), Date.parse(cal.updated) + 1);
    cal.updated = new Date(now).toISOString();
  };

  const fake: FakeGoogle = {
    rootUrl: '',
    endpoints: { oauth2AuthBaseUrl: '', oauth2TokenUrl: '', oauth2RevokeUrl: '' },
    denyConsent: false,
    consentAccount: 'host@example.com',
    clientId,
    clientSecret,
    accessTokenTtlSec: 3599,
    pageSize: null,
    meetPending: false,
    issueRefreshToken(account = 'host@example.com') {
      const token = `1//rt-${randomBytes(12).toString('hex')}`;
      refreshTokens.set(token, { account, valid: true });
      ensureCalendar(account);
      return token;
    },
    issueAccessToken(account = 'host@example.com') {
      const token = `ya29.at-${randomBytes(12).toString('hex')}`;
      accessTokens.set(token, { account, refreshToken: null, expiresAt: Date.now() + fake.accessTokenTtlSec * 1000 });
      ensureCalendar(account);
      return token;
    },
    revokeRefreshToken(token) {
      const rt = refreshTokens.get(token);
      if (rt) rt.valid = false;
      for (const [at, info] of accessTokens) if (info.refreshToken === token) accessTokens.delete(at);
    },
    expireAccessTokens() {
      for (const info of accessTokens.values()) info.expiresAt = 0;
    },
    isRefreshTokenValid: (token) => refreshTokens.get(token)?.valid === true,
    addCalendar: (id, o) => void ensureCalendar(id, o),
    addEvent(calendarId, event) {
      const cal = ensureCalendar(calendarId);
      const stored = newEvent(calendarId, { ...event, id: event.id ?? randomId() });
      cal.events.set(stored.id, stored);
      touch(cal, stored.id);
      return stored;
    },
    events: (calendarId) => [...(calendars.get(calendarId)?.events.values() ?? [])],
    event: (calendarId, id) => calendars.get(calendarId)?.events.get(id),
    failNext(times, f) {
      for (let i = 0; i < times; i++) failures.push({ status: f.status, retryAfter: f.retryAfter, reason: f.reason, where: f.where ?? 'calendar' });
    },
    stallNext(times) {
      stalls += times;
    },
    calls,
    count: (endpoint) => calls.filter((c) => c.endpoint === endpoint).length,
    bytes,
    down: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
    up: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r())),
    close: async () => {
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };

  function newEvent(calendarId: string, body: Json): Json {
    const now = new Date().toISOString();
    return {
      kind: 'calendar#event',
      etag: `"${Date.now()}${randomBytes(2).toString('hex')}"`,
      status: 'confirmed',
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${body.id} ${calendarId}`).toString('base64url')}`,
      created: now,
      updated: now,
      creator: { email: calendarId, self: true },
      organizer: { email: calendarId, self: true },
      iCalUID: `${body.id}@google.com`,
      sequence: 0,
      reminders: { useDefault: true },
      eventType: 'default',
      ...body,
    };
  }

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      try {
        handle(req, res, raw);
      } catch (err) {
        send(res, 'unknown', 500, apiError(500, 'backendError', (err as Error).message));
      }
    });
  });

  function send(res: http.ServerResponse, endpoint: string, status: number, body: Json | null, headers: Record<string, string> = {}) {
    const text = body === null ? '' : JSON.stringify(body);
    bytes[endpoint] = (bytes[endpoint] ?? 0) + Buffer.byteLength(text);
    res.writeHead(status, { ...(body === null ? {} : { 'content-type': 'application/json; charset=UTF-8' }), ...headers });
    res.end(text);
  }

  function endpointOf(method: string, path: string): string {
    if (path === '/o/oauth2/v2/auth') return 'authorize';
    if (path === '/token') return 'token';
    if (path === '/revoke') return 'revoke';
    if (path === '/calendar/v3/freeBusy') return 'freeBusy';
    if (/^\/calendar\/v3\/calendars\/[^/]+\/events$/.test(path)) return method === 'POST' ? 'events.insert' : 'events.list';
    if (/^\/calendar\/v3\/calendars\/[^/]+\/events\/[^/]+$/.test(path)) return `events.${({ GET: 'get', PATCH: 'patch', DELETE: 'delete', PUT: 'update' } as Record<string, string>)[method] ?? 'unknown'}`;
    return 'unknown';
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    const url = new URL(req.url!, 'http://fake');
    const method = req.method!;
    const endpoint = endpointOf(method, url.pathname);
    calls.push({ method, endpoint, path: url.pathname, query: Object.fromEntries(url.searchParams), at: Date.now() });
    if (stalls > 0) {
      stalls--;
      return; // never answered
    }
    const isToken = endpoint === 'token' || endpoint === 'revoke';
    const fIndex = failures.findIndex((f) => f.where === 'any' || (f.where === 'token') === isToken);
    if (fIndex >= 0) {
      const [f] = failures.splice(fIndex, 1);
      const headers: Record<string, string> = f!.retryAfter !== undefined ? { 'retry-after': f!.retryAfter } : {};
      if (isToken) return send(res, endpoint, f!.status, { error: f!.reason ?? 'server_error', error_description: 'injected failure' }, headers);
      if (f!.status === 401) return send(res, endpoint, 401, UNAUTHENTICATED, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"', ...headers });
      const [reason, message] = f!.reason ? [f!.reason, REASON_MESSAGE[f!.reason] ?? f!.reason] : (DEFAULT_REASON[f!.status] ?? ['unknown', 'Error']);
      return send(res, endpoint, f!.status, apiError(f!.status, reason, message, /RateLimit|quota|Limit/i.test(reason) ? { domain: 'usageLimits' } : {}), headers);
    }
    if (endpoint === 'authorize') return authorize(res, url);
    if (endpoint === 'token') return token(res, req, raw);
    if (endpoint === 'revoke') return revoke(res, url, raw);

    // Calendar API: a valid bearer token first.
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const at = bearer ? accessTokens.get(bearer) : undefined;
    if (!at || at.expiresAt <= Date.now()) {
      return send(res, endpoint, 401, UNAUTHENTICATED, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' });
    }
    let body: Json = {};
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, endpoint, 400, apiError(400, 'parseError', 'Parse Error'));
      }
    }
    if (endpoint === 'freeBusy' && method === 'POST') return freeBusy(res, body, at.account);

    const m = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m || endpoint.endsWith('unknown')) return send(res, endpoint, 404, apiError(404, 'notFound', 'Not Found'));
    const calendarId = decodeURIComponent(m[1]!) === 'primary' ? at.account : decodeURIComponent(m[1]!);
    const cal = calendars.get(calendarId);
    if (!cal) return send(res, endpoint, 404, apiError(404, 'notFound', 'Not Found'));
    const q = url.searchParams;
    const fields = q.get('fields');
    const out = (status: number, value: Json | null) => send(res, endpoint, status, value && fields ? pick(value, parseFields(fields)) : value);
    const canWrite = cal.accessRole === 'owner' || cal.accessRole === 'writer';
    if (cal.accessRole === 'freeBusyReader') return send(res, endpoint, 404, apiError(404, 'notFound', 'Not Found'));
    if (method !== 'GET' && !canWrite) return send(res, endpoint, 403, apiError(403, 'requiredAccessLevel', 'You need to have writer access to this calendar.'));

    if (endpoint === 'events.list') {
      if (q.has('syncToken')) {
        // Google: an incremental sync takes none of the filters of a full one.
        for (const p of ['timeMin', 'timeMax', 'updatedMin', 'q', 'iCalUID', 'orderBy', 'privateExtendedProperty', 'sharedExtendedProperty']) {
          if (q.has(p)) return send(res, endpoint, 400, apiError(400, 'invalid', `Sync token cannot be used with the ${p} parameter.`));
        }
        const since = syncPoint(q.get('syncToken')!);
        if (since === null || since > cal.etag) return send(res, endpoint, 410, apiError(410, 'fullSyncRequired', 'Sync token is no longer valid, a full sync is required.'));
        return out(200, list(cal, calendarId, q, since));
      }
      return out(200, list(cal, calendarId, q));
    }

    if (endpoint === 'events.insert') {
      if (!body.start || !body.end || (!body.start.dateTime && !body.start.date) || (!body.end.dateTime && !body.end.date)) {
        return send(res, endpoint, 400, apiError(400, 'required', 'Missing end time.'));
      }
      if (instant(body.end) <= instant(body.start)) return send(res, endpoint, 400, apiError(400, 'timeRangeEmpty', 'The specified time range is empty.'));
      if (body.id !== undefined && !BASE32HEX_ID.test(body.id)) return send(res, endpoint, 400, apiError(400, 'invalid', 'Invalid resource id value.'));
      if (body.id !== undefined && cal.events.has(body.id)) return send(res, endpoint, 409, apiError(409, 'duplicate', 'The requested identifier already exists.'));
      const { conferenceData, ...rest } = body;
      let event = newEvent(calendarId, { ...rest, id: body.id ?? randomId() });
      if (q.get('conferenceDataVersion') === '1' && conferenceData?.createRequest) {
        if (!cal.meetAllowed) return send(res, endpoint, 400, apiError(400, 'invalid', 'Invalid conference type value.'));
        event = { ...event, ...conference(conferenceData.createRequest) };
      }
      cal.events.set(event.id, event);
      touch(cal, event.id);
      return out(200, event);
    }

    const eventId = decodeURIComponent(m[2]!);
    const existing = cal.events.get(eventId);
    if (!existing) return send(res, endpoint, 404, apiError(404, 'notFound', 'Not Found'));
    if (endpoint === 'events.get') return out(200, existing);
    if (endpoint === 'events.delete') {
      if (existing.status === 'cancelled') return send(res, endpoint, 410, apiError(410, 'deleted', 'Resource has been deleted'));
      cal.events.set(eventId, { ...existing, status: 'cancelled', updated: new Date().toISOString() });
      touch(cal, eventId);
      return send(res, endpoint, 204, null);
    }
    if (endpoint === 'events.patch') {
      const { id: _id, conferenceData: _c, ...changes } = body;
      let next = mergePatch(existing, changes);
      if (instant(next.end) <= instant(next.start)) return send(res, endpoint, 400, apiError(400, 'timeRangeEmpty', 'The specified time range is empty.'));
      // Deleted events keep their id; a patch may bring them back (status confirmed), else they stay deleted.
      if (existing.status === 'cancelled' && changes.status === undefined) next.status = 'cancelled';
      const moved = JSON.stringify([existing.start, existing.end]) !== JSON.stringify([next.start, next.end]);
      next = { ...next, etag: `"${Date.now()}${randomBytes(2).toString('hex')}"`, updated: new Date().toISOString(), sequence: existing.sequence + (moved ? 1 : 0) };
      cal.events.set(eventId, next);
      touch(cal, eventId);
      return out(200, next);
    }
    return send(res, endpoint, 405, apiError(400, 'badRequest', 'Method not allowed'));
  }

  function conference(createRequest: Json): Json {
    const code = `${randomId().slice(0, 3)}-${randomId().slice(0, 4)}-${randomId().slice(0, 3)}`;
    const status = fake.meetPending ? 'pending' : 'success';
    const conferenceData: Json = {
      createRequest: { ...createRequest, status: { statusCode: status } },
      conferenceSolution: { key: { type: 'hangoutsMeet' }, name: 'Google Meet' },
      conferenceId: code,
    };
    if (status === 'pending') return { conferenceData };
    const uri = `https://meet.google.com/${code}`;
    return { conferenceData: { ...conferenceData, entryPoints: [{ entryPointType: 'video', uri, label: uri.slice(8) }] }, hangoutLink: uri };
  }

  function occurrences(cal: FakeCalendar, from: number, to: number, single: boolean, showDeleted: boolean): Json[] {
    const items: Json[] = [];
    for (const ev of cal.events.values()) {
      if (ev.status === 'cancelled' && !showDeleted) continue;
      if (ev.recurrence && single) items.push(...expand(ev, from, to));
      else if (ev.recurrence || (instant(ev.end) > from && instant(ev.start) < to)) items.push(ev);
    }
    return items.sort((a, b) => instant(a.start) - instant(b.start) || String(a.id).localeCompare(String(b.id)));
  }

  /** The calendar state a sync token stands for (the etag it was handed out at); null: not one of ours. */
  function syncPoint(token: string): number | null {
    const m = /^sync:(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
    return m ? Number(m[1]) : null;
  }

  /**
   * events.list; with `since` (an incremental sync), only the events changed after that point, deleted
   * ones included (status cancelled), recurring ones as their series (not expanded: there are no time
   * bounds to expand them in).
   */
  function list(cal: FakeCalendar, calendarId: string, q: URLSearchParams, since?: number): Json {
    const from = q.has('timeMin') ? Date.parse(q.get('timeMin')!) : -8.64e15;
    const to = q.has('timeMax') ? Date.parse(q.get('timeMax')!) : 8.64e15;
    const all =
      since === undefined
        ? occurrences(cal, from, to, q.get('singleEvents') === 'true', q.get('showDeleted') === 'true')
        : [...cal.events.values()].filter((e) => (cal.changedAt.get(e.id) ?? 0) > since).sort((a, b) => (cal.changedAt.get(a.id) ?? 0) - (cal.changedAt.get(b.id) ?? 0));
    const max = Math.min(Number(q.get('maxResults') ?? 250), 2500, fake.pageSize ?? Infinity);
    const offset = q.has('pageToken') ? Number(Buffer.from(q.get('pageToken')!, 'base64url').toString('utf8').split(':')[1]) : 0;
    const items = all.slice(offset, offset + max);
    const more = offset + max < all.length;
    return {
      kind: 'calendar#events',
      etag: `"${cal.etag}"`,
      summary: calendarId,
      description: '',
      updated: cal.updated,
      timeZone: 'UTC',
      accessRole: cal.accessRole,
      defaultReminders: [],
      ...(more
        ? { nextPageToken: Buffer.from(`${createHash('sha1').update(q.toString()).digest('hex').slice(0, 8)}:${offset + max}`).toString('base64url') }
        : { nextSyncToken: Buffer.from(`sync:${cal.etag}`).toString('base64url') }),
      items,
    };
  }

  function freeBusy(res: http.ServerResponse, body: Json, account: string) {
    const from = Date.parse(body.timeMin);
    const to = Date.parse(body.timeMax);
    const calendarsOut: Json = {};
    for (const { id } of body.items ?? []) {
      const cal = calendars.get(id === 'primary' ? account : id);
      if (!cal) {
        calendarsOut[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
        continue;
      }
      const spans = occurrences(cal, from, to, true, false)
        .filter((e) => e.transparency !== 'transparent' && !e.attendees?.some((a: Json) => a.self && a.responseStatus === 'declined'))
        .map((e) => [Math.max(from, instant(e.start)), Math.min(to, instant(e.end))] as [number, number])
        .filter(([s, e]) => e > s)
        .sort((a, b) => a[0] - b[0]);
      const merged: Array<[number, number]> = [];
      for (const s of spans) {
        const last = merged[merged.length - 1];
        if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
        else merged.push([...s]);
      }
      calendarsOut[id] = { busy: merged.map(([s, e]) => ({ start: new Date(s).toISOString(), end: new Date(e).toISOString() })) };
    }
    send(res, 'freeBusy', 200, { kind: 'calendar#freeBusy', timeMin: body.timeMin, timeMax: body.timeMax, calendars: calendarsOut });
  }

  function clientOk(req: http.IncomingMessage, form: URLSearchParams): boolean {
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basicAuth = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (basicAuth) [id, secret] = Buffer.from(basicAuth, 'base64').toString('utf8').split(':').map(decodeURIComponent) as [string, string];
    return id === clientId && secret === clientSecret;
  }

  /** Consent at once (or refused): 302 to redirect_uri with code and state, or error=access_denied and state. */
  function authorize(res: http.ServerResponse, url: URL) {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    // Google shows its own error page (no redirect) for an unknown client or a missing redirect URI.
    if (q.get('client_id') !== clientId || !redirectUri) return send(res, 'authorize', 400, { error: 'invalid_request', error_description: 'Missing or unknown client_id or redirect_uri' });
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (fake.denyConsent) {
      back.searchParams.set('error', 'access_denied');
    } else if (q.get('response_type') !== 'code') {
      back.searchParams.set('error', 'unsupported_response_type');
    } else {
      const code = `4/0A-${randomBytes(16).toString('hex')}`;
      const account = fake.consentAccount;
      ensureCalendar(account);
      codes.set(code, { account, redirectUri, challenge: q.get('code_challenge'), method: q.get('code_challenge_method') ?? 'plain', offline: q.get('access_type') === 'offline', scope: q.get('scope') ?? '', used: false });
      back.searchParams.set('code', code);
      back.searchParams.set('scope', q.get('scope') ?? '');
    }
    if (state !== null) back.searchParams.set('state', state);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  /** authorization_code grant: the code once, with the redirect URI and the PKCE verifier it was issued for. */
  function exchangeCode(res: http.ServerResponse, form: URLSearchParams) {
    const code = codes.get(form.get('code') ?? '');
    if (!code || code.used) return send(res, 'token', 400, { error: 'invalid_grant', error_description: 'Bad Request' });
    if (form.get('redirect_uri') !== code.redirectUri) return send(res, 'token', 400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
    const verifier = form.get('code_verifier') ?? '';
    const expected = code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
    if (code.challenge !== null && expected !== code.challenge) return send(res, 'token', 400, { error: 'invalid_grant', error_description: 'Invalid code verifier.' });
    code.used = true;
    const refreshToken = code.offline ? fake.issueRefreshToken(code.account) : null;
    const accessToken = `ya29.at-${randomBytes(12).toString('hex')}`;
    accessTokens.set(accessToken, { account: code.account, refreshToken, expiresAt: Date.now() + fake.accessTokenTtlSec * 1000 });
    const granted = code.scope.split(' ').filter(Boolean);
    return send(res, 'token', 200, {
      access_token: accessToken,
      expires_in: fake.accessTokenTtlSec,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      // Google answers the granted scopes with their full names (openid stays openid).
      scope: granted.map((s) => (s === 'email' || s === 'profile' ? `https://www.googleapis.com/auth/userinfo.${s}` : s)).join(' '),
      token_type: 'Bearer',
      ...(granted.includes('openid') ? { id_token: idToken(code.account, granted.includes('email'), accessToken) } : {}),
    });
  }

  /**
   * An id token as Google's (RS256 JWT: iss, azp, aud, sub, email + email_verified with the email
   * scope, at_hash, iat, exp). Signed with a key made here, which nothing publishes: a client that
   * checks signatures against Google's keys would refuse it, as it should a token from elsewhere.
   */
  function idToken(account: string, withEmail: boolean, accessToken: string): string {
    const now = Math.floor(Date.now() / 1000);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const header = b64({ alg: 'RS256', kid: 'fake-google-key', typ: 'JWT' });
    const atHash = createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
    // Google's subject: the account's stable numeric id.
    const sub = BigInt(`0x${createHash('sha256').update(account).digest('hex').slice(0, 16)}`).toString();
    const payload = b64({
      iss: 'https://accounts.google.com',
      azp: clientId,
      aud: clientId,
      sub,
      ...(withEmail ? { email: account, email_verified: true } : {}),
      at_hash: atHash,
      iat: now,
      exp: now + 3600,
    });
    signingKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(signingKey).toString('base64url');
    return `${header}.${payload}.${signature}`;
  }

  function token(res: http.ServerResponse, req: http.IncomingMessage, raw: string) {
    const form = new URLSearchParams(raw);
    if (req.method !== 'POST') return send(res, 'token', 405, { error: 'invalid_request', error_description: 'Method not allowed' });
    if (!clientOk(req, form)) return send(res, 'token', 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    if (form.get('grant_type') === 'authorization_code') return exchangeCode(res, form);
    if (form.get('grant_type') !== 'refresh_token') return send(res, 'token', 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: ' + form.get('grant_type') });
    const rt = form.get('refresh_token') ?? '';
    const info = refreshTokens.get(rt);
    if (!info?.valid) return send(res, 'token', 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    const accessToken = `ya29.at-${randomBytes(12).toString('hex')}`;
    accessTokens.set(accessToken, { account: info.account, refreshToken: rt, expiresAt: Date.now() + fake.accessTokenTtlSec * 1000 });
    return send(res, 'token', 200, {
      access_token: accessToken,
      expires_in: fake.accessTokenTtlSec,
      scope: 'https://www.googleapis.com/auth/calendar.events',
      token_type: 'Bearer',
    });
  }

  function revoke(res: http.ServerResponse, url: URL, raw: string) {
    const token = new URLSearchParams(raw).get('token') ?? url.searchParams.get('token') ?? '';
    const rt = refreshTokens.get(token);
    const at = accessTokens.get(token);
    if (rt?.valid) fake.revokeRefreshToken(token);
    else if (at) {
      // Revoking an access token revokes the grant it came from.
      if (at.refreshToken) fake.revokeRefreshToken(at.refreshToken);
      accessTokens.delete(token);
    } else return send(res, 'revoke', 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
    return send(res, 'revoke', 200, {});
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  fake.rootUrl = `${base}/`;
  fake.endpoints = { oauth2AuthBaseUrl: `${base}/o/oauth2/v2/auth`, oauth2TokenUrl: `${base}/token`, oauth2RevokeUrl: `${base}/revoke` };
  return fake;
}
