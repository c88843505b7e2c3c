import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ICAL from 'ical.js';

/**
 * A local stand-in for the two Microsoft HTTP surfaces the Microsoft adapter uses, on one HTTPS port:
 *
 * - the Microsoft identity platform (v2.0): `GET /{tenant}/v2.0/.well-known/openid-configuration` and
 *   `GET /{tenant}/oauth2/v2.0/authorize` (consent given at once, or refused with `denyConsent`: 302 to
 *   redirect_uri with code + state, or error=access_denied + state) and
 *   `POST /{tenant}/oauth2/v2.0/token` (refresh_token and authorization_code grants, PKCE S256 and the
 *   redirect URI checked), with its error bodies
 *   (`{error, error_description: "AADSTS…", error_codes, timestamp, trace_id, correlation_id, error_uri}`);
 * - Microsoft Graph v1.0 calendar endpoints: `GET /me/calendar`, `GET /me/calendars/{id}`,
 *   `GET /me/calendars/{id}/calendarView` (recurrences expanded, `$top`/`$skip` paging with
 *   `@odata.nextLink`, `$select`, `$expand` of single-value extended properties),
 *   `GET /me/calendars/{id}/events?$filter=singleValueExtendedProperties/Any(…)`,
 *   `POST /me/calendars/{id}/events` (transactionId: the same id gives back the existing event),
 *   `PATCH` and `DELETE /me/events/{id}`; errors as `{error:{code, message, innerError:{date,
 *   request-id, client-request-id}}}`, throttling as 429 + Retry-After.
 *
 * HTTPS with a throwaway self-signed certificate made at start (openssl); its PEM is `ca`, for the
 * code under test to trust through its own options. Nothing is written to the repository.
 */

export type ShowAs = 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere' | 'unknown';

export interface FakeEventInput {
  subject?: string;
  /** A Date: a timed event; 'YYYY-MM-DD': an all-day event (end exclusive). */
  start: Date | string;
  end: Date | string;
  showAs?: ShowAs;
  isCancelled?: boolean;
  /** An iCalendar RRULE (FREQ=WEEKLY;COUNT=4): a series, expanded by calendarView. */
  rrule?: string;
  /** Starts of occurrences deleted from the series. */
  deletedOccurrences?: Date[];
  calendarId?: string;
  /** Single-value extended properties (id → value), as another client may have set. */
  extendedProperties?: Record<string, string>;
}

export interface FakeEvent {
  id: string;
  iCalUId: string;
  calendarId: string;
  subject: string;
  body: { contentType: string; content: string };
  location: { displayName: string };
  /** Timed: instants; all-day: UTC midnights of the dates. */
  start: Date;
  end: Date;
  isAllDay: boolean;
  showAs: ShowAs;
  isCancelled: boolean;
  rrule: string | null;
  deletedOccurrences: number[];
  transactionId: string | null;
  extendedProperties: Array<{ id: string; value: string }>;
  isOnlineMeeting: boolean;
  onlineMeetingProvider: string | null;
  onlineMeeting: { joinUrl: string } | null;
  changeKey: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
}

export interface FakeCall {
  kind: 'graph' | 'token' | 'openid' | 'other';
  method: string;
  /** Path and query as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** ms since epoch when the request arrived. */
  at: number;
}

interface Failure {
  status: number;
  retryAfter?: string;
  on: 'graph' | 'token';
}

export interface FakeMicrosoft {
  /** https://127.0.0.1:<port>: Graph root and login host alike. */
  url: string;
  /** `127.0.0.1:<port>`, for MSAL's knownAuthorities. */
  host: string;
  /** MSAL authority (a tenant under the login host). */
  authority: string;
  /** PEM of the self-signed certificate the fake serves. */
  ca: string;
  clientId: string;
  clientSecret: string;
  /** The default calendar's id. */
  calendarId: string;
  calls: FakeCall[];
  /** Most items calendarView sends on one page, whatever $top asks (Graph sends fewer than asked at times). */
  pageLimit: number;
  /** Whether POST with isOnlineMeeting makes a Teams meeting (an account without Teams ignores it). */
  teams: boolean;
  /** The next consents are refused (redirect with error=access_denied). */
  denyConsent: boolean;
  issueRefreshToken(): string;
  /** That one refresh token stops working (invalid_grant); tokens rotated in from it or before it keep working. */
  revokeRefreshToken(token: string): void;
  /**
   * The user (or the tenant admin) withdraws consent, or resets the password: every refresh token of the
   * grant `token` belongs to (the one from the consent and all rotated in after it) stops working.
   */
  revokeGrant(token: string): void;
  /** Every access token issued so far stops working (401 InvalidAuthenticationToken). */
  expireAccessTokens(): void;
  addCalendar(opts?: { name?: string; canEdit?: boolean }): string;
  addEvent(input: FakeEventInput): FakeEvent;
  events(calendarId?: string): FakeEvent[];
  /** The next `count` requests of that kind are answered `status` (Retry-After given, for 429/503). */
  failNext(count: number, status: number, opts?: { retryAfter?: number | string; on?: 'graph' | 'token' }): void;
  /** The next `count` requests are never answered. */
  hangNext(count: number): void;
  /** The next `count` Graph requests (of `method`, if given) are carried out, but the connection is cut instead of answering (a lost answer). */
  dropAnswers(count: number, method?: string): void;
  /** Forgets failures queued by failNext that no request has met. */
  clearFailures(): void;
  /** The next `count` `$filter` lookups find nothing (a store that has not caught up yet). */
  missLookups(count: number): void;
  /** Stops listening (connections refused) until comeBack(). */
  goDown(): Promise<void>;
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

/** A throwaway self-signed certificate for 127.0.0.1 (P-256, one day), made with the openssl CLI; nothing stays on disk. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-ms-tls-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
/** Graph's dateTime form: 2026-11-25T09:00:00.0000000 */
const graphDateTime = (d: Date) => `${d.toISOString().slice(0, 19)}.0000000`;
const MS_PER_DAY = 86_400_000;

function parseGraphTime(value: unknown): Date | null {
  const v = value as { dateTime?: unknown; timeZone?: unknown } | undefined;
  if (typeof v?.dateTime !== 'string' || v.timeZone !== 'UTC') return null;
  const d = new Date(`${v.dateTime.slice(0, 23)}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}

export async function startFakeMicrosoft(opts: { clientId?: string; clientSecret?: string } = {}): Promise<FakeMicrosoft> {
  const { key, cert } = selfSignedCertificate();
  const clientId = opts.clientId ?? randomUUID();
  const clientSecret = opts.clientSecret ?? `secret-${randomBytes(12).toString('hex')}`;
  const tenantId = randomUUID();
  const userId = randomUUID();
  /** Each refresh token and the grant (consent) it belongs to: rotation hands out another token of the same grant. */
  const refreshTokens = new Map<string, { revoked: boolean; grant: string }>();
  /** Authorization codes handed out at consent: single use, bound to redirect URI and PKCE challenge. */
  const codes = new Map<string, { redirectUri: string; challenge: string | null; method: string; used: boolean }>();
  const accessTokens = new Map<string, { valid: boolean }>();
  const calendars = new Map<string, { id: string; name: string; canEdit: boolean; isDefaultCalendar: boolean; changeKey: string }>();
  const events = new Map<string, FakeEvent>();
  const failures: Failure[] = [];
  let hangs = 0;
  let drops = 0;
  let dropMethod: string | undefined;
  let misses = 0;
  const sockets = new Set<Socket>();
  let base = '';

  const newId = () => `AAMkAD${randomBytes(24).toString('base64url')}`;
  const newChangeKey = () => randomBytes(12).toString('base64');
  const defaultCalendar = { id: newId(), name: 'Calendar', canEdit: true, isDefaultCalendar: true, changeKey: newChangeKey() };
  calendars.set(defaultCalendar.id, defaultCalendar);

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (body === null) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; odata.metadata=minimal; odata.streaming=true; charset=utf-8', 'request-id': randomUUID(), ...headers });
    res.end(text);
  }

  function graphFail(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
    const date = new Date().toISOString().slice(0, 19);
    send(res, status, { error: { code, message, innerError: { date, 'request-id': randomUUID(), 'client-request-id': randomUUID() } } }, headers);
  }

  /** The identity platform's error body. */
  function aadFail(res: ServerResponse, status: number, error: string, code: number, description: string, headers: Record<string, string> = {}): void {
    const traceId = randomUUID();
    const correlationId = randomUUID();
    const timestamp = new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z';
    send(
      res,
      status,
      {
        error,
        error_description: `AADSTS${code}: ${description} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
        error_codes: [code],
        timestamp,
        trace_id: traceId,
        correlation_id: correlationId,
        error_uri: `${base}/error?code=${code}`,
      },
      headers,
    );
  }

  const STATUS_FAILURE: Record<number, [code: string, message: string]> = {
    401: ['InvalidAuthenticationToken', 'Access token has expired or is not yet valid.'],
    429: ['ApplicationThrottled', 'Application is over its MailboxConcurrency limit.'],
    500: ['InternalServerError', 'An internal server error occurred.'],
    502: ['BadGateway', 'Bad gateway.'],
    503: ['ServiceUnavailable', 'The service is temporarily unavailable.'],
    504: ['GatewayTimeout', 'The gateway timed out.'],
  };

  function injectedFailure(res: ServerResponse, on: 'graph' | 'token'): boolean {
    const index = failures.findIndex((f) => f.on === on);
    if (index < 0) return false;
    const [f] = failures.splice(index, 1);
    const headers: Record<string, string> = f!.retryAfter !== undefined ? { 'retry-after': f!.retryAfter } : {};
    if (on === 'token') {
      aadFail(res, f!.status, f!.status === 429 ? 'temporarily_unavailable' : 'server_error', 90033, 'A transient error has occurred. Please try again.', headers);
    } else {
      const [code, message] = STATUS_FAILURE[f!.status] ?? ['BadRequest', 'The request failed.'];
      graphFail(res, f!.status, code, message, headers);
    }
    return true;
  }

  // ---- identity platform ----

  function openIdConfiguration(tenant: string) {
    const root = `${base}/${tenant}`;
    return {
      token_endpoint: `${root}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: `${base}/${tenant === 'organizations' || tenant === 'common' ? '{tenantid}' : tenant}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: `${base}/oidc/userinfo`,
      authorization_endpoint: `${root}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${root}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${root}/oauth2/v2.0/logout`,
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'preferred_username', 'name', 'tid', 'ver', 'oid'],
      kerberos_endpoint: `${root}/kerberos`,
      tenant_region_scope: 'EU',
      cloud_instance_name: 'microsoftonline.com',
      cloud_graph_host_name: 'graph.windows.net',
      msgraph_host: 'graph.microsoft.com',
      rbac_url: 'https://pas.windows.net',
    };
  }

  function idToken(): string {
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', kid: 'fake-key' }));
    const payload = b64url(
      JSON.stringify({ aud: clientId, iss: `${base}/${tenantId}/v2.0`, iat: now, nbf: now, exp: now + 3600, name: 'Alice Host', oid: userId, preferred_username: 'alice@contoso.example', sub: b64url(userId), tid: tenantId, ver: '2.0' }),
    );
    return `${header}.${payload}.${b64url('not-a-signature')}`;
  }

  function tokenEndpoint(body: string, res: ServerResponse): void {
    const form = new URLSearchParams(body);
    if (form.get('client_id') !== clientId) {
      aadFail(res, 400, 'unauthorized_client', 700016, `Application with identifier '${form.get('client_id') ?? ''}' was not found in the directory.`);
      return;
    }
    if (form.get('client_secret') !== clientSecret) {
      aadFail(res, 401, 'invalid_client', 7000215, 'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.');
      return;
    }
    if (form.get('grant_type') === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      if (!code || code.used) {
        aadFail(res, 400, 'invalid_grant', 54005, 'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.');
        return;
      }
      if (form.get('redirect_uri') !== code.redirectUri) {
        aadFail(res, 400, 'invalid_grant', 500117, 'The reply uri specified in the request does not match the reply uri used in the authorization request.');
        return;
      }
      const verifier = form.get('code_verifier') ?? '';
      const expected = code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
      if (code.challenge !== null && expected !== code.challenge) {
        aadFail(res, 400, 'invalid_grant', 501481, 'The Code_Verifier does not match the code_challenge supplied in the authorization request.');
        return;
      }
      code.used = true;
    } else if (form.get('grant_type') !== 'refresh_token') {
      aadFail(res, 400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
      return;
    }
    const presented = form.get('refresh_token') ?? '';
    const rt = form.get('grant_type') === 'authorization_code' ? { revoked: false, grant: randomUUID() } : refreshTokens.get(presented);
    if (!rt) {
      aadFail(res, 400, 'invalid_grant', 9002313, 'Invalid request. Request is malformed or invalid.');
      return;
    }
    if (rt.revoked) {
      aadFail(res, 400, 'invalid_grant', 50173, "The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password.");
      return;
    }
    const accessToken = `eyJ0eXAiOiJKV1QifQ.${randomBytes(24).toString('base64url')}`;
    accessTokens.set(accessToken, { valid: true });
    // A new refresh token with every answer; the old one keeps working (as for confidential clients).
    const next = issueRefreshToken(rt.grant);
    const scopes = (form.get('scope') ?? '').split(' ').filter(Boolean);
    send(res, 200, {
      token_type: 'Bearer',
      scope: scopes.filter((s) => s !== 'offline_access' && s !== 'openid' && s !== 'profile').join(' '),
      expires_in: 3599,
      ext_expires_in: 3599,
      access_token: accessToken,
      refresh_token: next,
      ...(scopes.includes('openid') ? { id_token: idToken() } : {}),
      ...(form.get('client_info') === '1' ? { client_info: b64url(JSON.stringify({ uid: userId, utid: tenantId })) } : {}),
    });
  }

  /** Consent at once (or refused): 302 to redirect_uri with code and state, or error=access_denied and state. */
  function authorizeEndpoint(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    if (q.get('client_id') !== clientId || !redirectUri) {
      aadFail(res, 400, 'unauthorized_client', 700016, `Application with identifier '${q.get('client_id') ?? ''}' was not found in the directory.`);
      return;
    }
    const back = new URL(redirectUri);
    if (fake.denyConsent) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'AADSTS65004: User declined to consent to access the app.');
    } else {
      const code = `1.A${randomBytes(32).toString('base64url')}`;
      codes.set(code, { redirectUri, challenge: q.get('code_challenge'), method: q.get('code_challenge_method') ?? 'plain', used: false });
      back.searchParams.set('code', code);
      back.searchParams.set('client_info', b64url(JSON.stringify({ uid: userId, utid: tenantId })));
      back.searchParams.set('session_state', randomUUID());
    }
    const state = q.get('state');
    if (state !== null) back.searchParams.set('state', state);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  /** A refresh token of `grant` (none: of a new grant, as at a consent). */
  function issueRefreshToken(grant: string = randomUUID()): string {
    const token = `0.A${randomBytes(48).toString('base64url')}`;
    refreshTokens.set(token, { revoked: false, grant });
    return token;
  }

  // ---- Graph ----

  function bearerOk(req: IncomingMessage, res: ServerResponse): boolean {
    const header = req.headers.authorization ?? '';
    const token = /^Bearer (.+)$/.exec(header)?.[1];
    if (!token) {
      graphFail(res, 401, 'InvalidAuthenticationToken', 'Access token is empty.');
      return false;
    }
    if (!accessTokens.get(token)?.valid) {
      graphFail(res, 401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.', {
        'www-authenticate': 'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"',
      });
      return false;
    }
    return true;
  }

  const notFound = (res: ServerResponse) => graphFail(res, 404, 'ErrorItemNotFound', 'The specified object was not found in the store.');

  function calendarJson(c: { id: string; name: string; canEdit: boolean; isDefaultCalendar: boolean; changeKey: string }) {
    return {
      '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/calendars/$entity`,
      id: c.id,
      name: c.name,
      color: 'auto',
      hexColor: '',
      isDefaultCalendar: c.isDefaultCalendar,
      changeKey: c.changeKey,
      canShare: c.canEdit,
      canViewPrivateItems: true,
      canEdit: c.canEdit,
      allowedOnlineMeetingProviders: ['teamsForBusiness'],
      defaultOnlineMeetingProvider: 'teamsForBusiness',
      isTallyingResponses: true,
      isRemovable: !c.isDefaultCalendar,
      owner: { name: 'Alice Host', address: 'alice@contoso.example' },
    };
  }

  /** One event (or occurrence) as Graph sends it, times in UTC. */
  function eventJson(e: FakeEvent, occurrence?: { start: Date; end: Date; id: string }, expandIds?: Set<string> | null) {
    const start = occurrence?.start ?? e.start;
    const end = occurrence?.end ?? e.end;
    return {
      '@odata.etag': `W/"${e.changeKey}"`,
      id: occurrence?.id ?? e.id,
      createdDateTime: e.createdDateTime,
      lastModifiedDateTime: e.lastModifiedDateTime,
      changeKey: e.changeKey,
      iCalUId: e.iCalUId,
      subject: e.subject,
      body: e.body,
      start: { dateTime: graphDateTime(start), timeZone: 'UTC' },
      end: { dateTime: graphDateTime(end), timeZone: 'UTC' },
      location: e.location,
      isAllDay: e.isAllDay,
      isCancelled: e.isCancelled,
      showAs: e.showAs,
      type: e.rrule ? (occurrence ? 'occurrence' : 'seriesMaster') : 'singleInstance',
      ...(occurrence ? { seriesMasterId: e.id } : {}),
      isOnlineMeeting: e.isOnlineMeeting,
      onlineMeetingProvider: e.onlineMeetingProvider ?? 'unknown',
      onlineMeeting: e.onlineMeeting,
      ...(expandIds ? { singleValueExtendedProperties: e.extendedProperties.filter((p) => expandIds.has(p.id.toLowerCase())) } : {}),
    };
  }

  /** Occurrences of an event overlapping [from, to): one for a single event, the expanded series otherwise. */
  function occurrences(e: FakeEvent, from: Date, to: Date): Array<{ start: Date; end: Date; id: string } | undefined> {
    const overlaps = (s: Date, en: Date) => s.getTime() < to.getTime() && en.getTime() > from.getTime();
    if (!e.rrule) return overlaps(e.start, e.end) ? [undefined] : [];
    const length = e.end.getTime() - e.start.getTime();
    const iterator = ICAL.Recur.fromString(e.rrule).iterator(ICAL.Time.fromJSDate(e.start, true));
    const out: Array<{ start: Date; end: Date; id: string }> = [];
    for (let next = iterator.next(), n = 0; next && n < 5000; next = iterator.next(), n++) {
      const start = next.toJSDate();
      if (start.getTime() >= to.getTime()) break;
      const end = new Date(start.getTime() + length);
      if (e.deletedOccurrences.includes(start.getTime()) || !overlaps(start, end)) continue;
      out.push({ start, end, id: `${e.id}_${start.toISOString().slice(0, 10).replace(/-/g, '')}` });
    }
    return out;
  }

  /** `$expand=singleValueExtendedProperties($filter=id eq '…')`: the property ids to return (lower case); null without $expand. */
  function expandedIds(q: URLSearchParams): Set<string> | null {
    const expand = q.get('$expand');
    if (!expand) return null;
    const m = /^singleValueExtendedProperties\(\$filter=id eq '((?:[^']|'')*)'\)$/i.exec(expand.trim());
    return new Set(m ? [m[1]!.replace(/''/g, "'").toLowerCase()] : []);
  }

  function select(item: Record<string, unknown>, q: URLSearchParams): Record<string, unknown> {
    const fields = q.get('$select');
    if (!fields) return item;
    const keep = new Set([...fields.split(',').map((f) => f.trim()), 'id', '@odata.etag', 'singleValueExtendedProperties']);
    return Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k)));
  }

  function calendarView(res: ServerResponse, calendarId: string, q: URLSearchParams, pathname: string): void {
    const startParam = q.get('startDateTime');
    const endParam = q.get('endDateTime');
    if (!startParam || !endParam) {
      graphFail(res, 400, 'ErrorInvalidParameter', 'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.');
      return;
    }
    const from = new Date(startParam);
    const to = new Date(endParam);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
      graphFail(res, 400, 'ErrorInvalidParameter', 'The value of the parameter StartDateTime or EndDateTime is invalid.');
      return;
    }
    const expand = expandedIds(q);
    const all: Array<Record<string, unknown> & { sortKey: number }> = [];
    for (const e of events.values()) {
      if (e.calendarId !== calendarId) continue;
      for (const occ of occurrences(e, from, to)) all.push({ ...select(eventJson(e, occ, expand), q), sortKey: (occ?.start ?? e.start).getTime() });
    }
    all.sort((a, b) => a.sortKey - b.sortKey);
    const skip = Number(q.get('$skip') ?? '0');
    const top = Math.min(Number(q.get('$top') ?? '10'), fake.pageLimit);
    const page = all.slice(skip, skip + top).map(({ sortKey: _, ...rest }) => rest);
    const body: Record<string, unknown> = { '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/calendars('${calendarId}')/calendarView`, value: page };
    if (skip + top < all.length) {
      const next = new URLSearchParams(q);
      next.set('$top', String(top));
      next.set('$skip', String(skip + top));
      body['@odata.nextLink'] = `${base}${pathname}?${next.toString()}`;
    }
    send(res, 200, body);
  }

  const EXT_FILTER = /^singleValueExtendedProperties\/any\((\w+):\s*\1\/id eq '((?:[^']|'')*)' and \1\/value eq '((?:[^']|'')*)'\)$/i;

  function listEvents(res: ServerResponse, calendarId: string, q: URLSearchParams): void {
    const filter = q.get('$filter');
    let match: (e: FakeEvent) => boolean = () => true;
    if (filter) {
      const m = EXT_FILTER.exec(filter.trim());
      if (!m) {
        graphFail(res, 400, 'ErrorInvalidUrlQueryFilter', 'The query filter contains one or more invalid nodes.');
        return;
      }
      const id = m[2]!.replace(/''/g, "'").toLowerCase();
      const value = m[3]!.replace(/''/g, "'");
      match = (e) => e.extendedProperties.some((p) => p.id.toLowerCase() === id && p.value === value);
      if (misses > 0) {
        misses -= 1;
        match = () => false;
      }
    }
    const expand = expandedIds(q);
    const top = Math.min(Number(q.get('$top') ?? '10'), fake.pageLimit);
    const found = [...events.values()].filter((e) => e.calendarId === calendarId && match(e)).slice(0, top);
    send(res, 200, { '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/calendars('${calendarId}')/events`, value: found.map((e) => select(eventJson(e, undefined, expand), q)) });
  }

  function applyFields(e: FakeEvent, body: Record<string, unknown>): string | null {
    if ('subject' in body) e.subject = String(body.subject ?? '');
    if ('body' in body) e.body = body.body as FakeEvent['body'];
    if ('location' in body) e.location = { displayName: String((body.location as { displayName?: unknown } | null)?.displayName ?? '') };
    if ('showAs' in body) e.showAs = body.showAs as ShowAs;
    if ('start' in body || 'end' in body) {
      const start = 'start' in body ? parseGraphTime(body.start) : e.start;
      const end = 'end' in body ? parseGraphTime(body.end) : e.end;
      if (!start || !end) return 'start and end need a dateTime with timeZone UTC';
      if (end.getTime() < start.getTime()) return 'The end time of the event must be after its start time.';
      e.start = start;
      e.end = end;
    }
    if (body.isOnlineMeeting === true && !e.onlineMeeting && fake.teams) {
      e.isOnlineMeeting = true;
      e.onlineMeetingProvider = String(body.onlineMeetingProvider ?? 'teamsForBusiness');
      e.onlineMeeting = { joinUrl: `https://teams.microsoft.com/l/meetup-join/19%3ameeting_${randomBytes(16).toString('base64url')}%40thread.v2/0` };
    }
    const props = body.singleValueExtendedProperties as Array<{ id: string; value: string }> | undefined;
    for (const p of props ?? []) {
      e.extendedProperties = e.extendedProperties.filter((x) => x.id.toLowerCase() !== p.id.toLowerCase());
      e.extendedProperties.push({ id: p.id, value: p.value });
    }
    e.changeKey = newChangeKey();
    e.lastModifiedDateTime = new Date().toISOString();
    return null;
  }

  function blankEvent(calendarId: string): FakeEvent {
    const now = new Date().toISOString();
    return {
      id: newId(),
      iCalUId: `040000008200E00074C5B7101A82E008${randomBytes(28).toString('hex').toUpperCase()}`,
      calendarId,
      subject: '',
      body: { contentType: 'html', content: '' },
      location: { displayName: '' },
      start: new Date(0),
      end: new Date(0),
      isAllDay: false,
      showAs: 'busy',
      isCancelled: false,
      rrule: null,
      deletedOccurrences: [],
      transactionId: null,
      extendedProperties: [],
      isOnlineMeeting: false,
      onlineMeetingProvider: null,
      onlineMeeting: null,
      changeKey: newChangeKey(),
      createdDateTime: now,
      lastModifiedDateTime: now,
    };
  }

  function createEvent(res: ServerResponse, calendarId: string, raw: string): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      graphFail(res, 400, 'BadRequest', 'Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.');
      return;
    }
    const calendar = calendars.get(calendarId);
    if (!calendar?.canEdit) {
      graphFail(res, 403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
      return;
    }
    const transactionId = typeof body.transactionId === 'string' ? body.transactionId : null;
    const earlier = transactionId ? [...events.values()].find((e) => e.transactionId === transactionId) : undefined;
    if (earlier) {
      send(res, 201, { '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/calendars('${calendarId}')/events/$entity`, ...eventJson(earlier) });
      return;
    }
    if (!('start' in body) || !('end' in body)) {
      graphFail(res, 400, 'ErrorInvalidRequest', 'Your request can\'t be completed. The start and end time of the event are required.');
      return;
    }
    const e = blankEvent(calendarId);
    e.transactionId = transactionId;
    const problem = applyFields(e, body);
    if (problem) {
      graphFail(res, 400, 'ErrorInvalidRequest', problem);
      return;
    }
    events.set(e.id, e);
    send(res, 201, { '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/calendars('${calendarId}')/events/$entity`, ...eventJson(e) }, { location: `${base}/v1.0/me/events('${e.id}')` });
  }

  function graph(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): void {
    if (!bearerOk(req, res)) return;
    const p = url.pathname.slice('/v1.0'.length);
    const q = url.searchParams;
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && p === '/me/calendar') return send(res, 200, select(calendarJson(defaultCalendar), q));
    if ((m = /^\/me\/calendars\/([^/]+)(\/calendarView|\/events)?$/.exec(p))) {
      const id = decodeURIComponent(m[1]!);
      const calendar = calendars.get(id);
      if (!calendar) return notFound(res);
      if (!m[2] && req.method === 'GET') return send(res, 200, select(calendarJson(calendar), q));
      if (m[2] === '/calendarView' && req.method === 'GET') return calendarView(res, id, q, url.pathname);
      if (m[2] === '/events' && req.method === 'GET') return listEvents(res, id, q);
      if (m[2] === '/events' && req.method === 'POST') return createEvent(res, id, raw);
    }
    if (req.method === 'GET' && p === '/me/calendar/calendarView') return calendarView(res, defaultCalendar.id, q, url.pathname);
    if ((m = /^\/me\/events\/([^/]+)$/.exec(p))) {
      const e = events.get(decodeURIComponent(m[1]!));
      if (!e) return notFound(res);
      if (req.method === 'DELETE') {
        events.delete(e.id);
        return send(res, 204, null);
      }
      if (req.method === 'PATCH') {
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return graphFail(res, 400, 'BadRequest', 'Unable to read JSON request payload.');
        }
        const problem = applyFields(e, body);
        if (problem) return graphFail(res, 400, 'ErrorInvalidRequest', problem);
        return send(res, 200, { '@odata.context': `${base}/v1.0/$metadata#users('${userId}')/events/$entity`, ...eventJson(e) });
      }
      if (req.method === 'GET') return send(res, 200, select(eventJson(e, undefined, expandedIds(q)), q));
    }
    graphFail(res, 400, 'BadRequest', `Resource not found for the segment '${p.split('/').pop() ?? ''}'.`);
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', base);
    const openid = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    const kind: FakeCall['kind'] = url.pathname.startsWith('/v1.0/') ? 'graph' : token ? 'token' : openid ? 'openid' : 'other';
    fake.calls.push({ kind, method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: Date.now() });
    if (hangs > 0) {
      hangs -= 1;
      return; // never answered; the socket is destroyed at goDown/close
    }
    if (kind === 'graph') {
      if (injectedFailure(res, 'graph')) return;
      if (drops > 0 && (dropMethod === undefined || dropMethod === req.method)) {
        drops -= 1;
        // Done, but the answer never arrives.
        res.writeHead = (() => res) as unknown as typeof res.writeHead;
        res.end = (() => {
          req.socket.destroy();
          return res;
        }) as unknown as typeof res.end;
      }
      return graph(req, res, url, raw);
    }
    if (kind === 'token' && req.method === 'POST') {
      if (injectedFailure(res, 'token')) return;
      return tokenEndpoint(raw, res);
    }
    if (kind === 'openid' && req.method === 'GET') return send(res, 200, openIdConfiguration(openid![1]!));
    if (req.method === 'GET' && /^\/[^/]+\/oauth2\/v2\.0\/authorize$/.test(url.pathname)) return authorizeEndpoint(url, res);
    send(res, 404, { error: 'not_found', error_description: `no such endpoint in the fake: ${req.method} ${url.pathname}` });
  }

  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  base = `https://127.0.0.1:${port}`;

  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });

  const fake: FakeMicrosoft = {
    url: base,
    host: `127.0.0.1:${port}`,
    authority: `${base}/${tenantId}`,
    ca: cert,
    clientId,
    clientSecret,
    calendarId: defaultCalendar.id,
    calls: [],
    pageLimit: 1000,
    teams: true,
    denyConsent: false,
    issueRefreshToken: () => issueRefreshToken(),
    revokeRefreshToken(t) {
      const rt = refreshTokens.get(t);
      if (rt) rt.revoked = true;
    },
    revokeGrant(t) {
      const grant = refreshTokens.get(t)?.grant;
      for (const rt of refreshTokens.values()) if (grant !== undefined && rt.grant === grant) rt.revoked = true;
    },
    expireAccessTokens() {
      for (const t of accessTokens.values()) t.valid = false;
    },
    addCalendar(o = {}) {
      const c = { id: newId(), name: o.name ?? 'Other', canEdit: o.canEdit ?? true, isDefaultCalendar: false, changeKey: newChangeKey() };
      calendars.set(c.id, c);
      return c.id;
    },
    addEvent(input) {
      const e = blankEvent(input.calendarId ?? defaultCalendar.id);
      e.subject = input.subject ?? 'Busy';
      const allDay = typeof input.start === 'string';
      e.isAllDay = allDay;
      e.start = allDay ? new Date(`${input.start as string}T00:00:00Z`) : (input.start as Date);
      e.end = allDay ? new Date(`${input.end as string}T00:00:00Z`) : (input.end as Date);
      e.showAs = input.showAs ?? (allDay ? 'free' : 'busy');
      e.isCancelled = input.isCancelled ?? false;
      e.rrule = input.rrule ?? null;
      e.deletedOccurrences = (input.deletedOccurrences ?? []).map((d) => d.getTime());
      e.extendedProperties = Object.entries(input.extendedProperties ?? {}).map(([id, value]) => ({ id, value }));
      if (allDay && (e.end.getTime() - e.start.getTime()) % MS_PER_DAY !== 0) throw new Error('all-day events span whole days');
      events.set(e.id, e);
      return e;
    },
    events: (calendarId) => [...events.values()].filter((e) => calendarId === undefined || e.calendarId === calendarId),
    failNext(count, status, o = {}) {
      for (let i = 0; i < count; i++) failures.push({ status, on: o.on ?? 'graph', ...(o.retryAfter !== undefined ? { retryAfter: String(o.retryAfter) } : {}) });
    },
    hangNext(count) {
      hangs += count;
    },
    dropAnswers(count, method) {
      drops = count;
      dropMethod = method;
    },
    clearFailures() {
      failures.length = 0;
    },
    missLookups(count) {
      misses += count;
    },
    goDown: stop,
    comeBack: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    close: stop,
  };
  return fake;
}
