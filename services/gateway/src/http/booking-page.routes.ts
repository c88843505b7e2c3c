import type { Request, RequestHandler, Response } from 'express';
import { DomainError } from '@sched/contracts';
import { idempotencyHeader, onBehalfOf, requestContext, toUpstreamDomainError, UpstreamError, type HttpApp, type HttpMethod, type InternalClient, type OnBehalfOf } from '@sched/http';
import type { Db } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { GatewayConfig } from '../config';
import { bookingPageAsset, bookingPageDocument, sendAsset, setPageSecurityHeaders } from '../booking-page/booking-page.assets';
import { decide, windowStart, type RateLimitPolicy } from '../domain/rate-limit';
import { getWorkspaceBySlug, type AdminStore } from '../domain/workspace-admin';
import { createAdminStore } from '../store/admin-store';
import { countRequest, type CounterPool } from '../store/rate-limit.queries';

export interface BookingPageDeps {
  /** Path of BOOKING_PAGE_URL, e.g. `/book`: the page and its API live under it. */
  basePath: string;
  invitation: InternalClient;
  store: AdminStore;
  countRequest: (counterKey: string, windowStart: Date) => Promise<number>;
  bookingPolicy: RateLimitPolicy;
  logger: Logger;
}

/** Wires the page onto the gateway's own store and its invitation upstream (one line in app.ts). */
export function bookingPageDeps(p: { config: Readonly<GatewayConfig>; db: Db; counterPool: CounterPool; invitation: InternalClient; logger: Logger }): BookingPageDeps {
  return {
    basePath: new URL(p.config.BOOKING_PAGE_URL).pathname.replace(/\/+$/, ''),
    invitation: p.invitation,
    store: createAdminStore(p.db),
    countRequest: (key, start) => countRequest(p.counterPool, key, start),
    bookingPolicy: { limit: p.config.BOOKING_PAGE_RATE_LIMIT, windowSeconds: p.config.BOOKING_PAGE_RATE_WINDOW_SECONDS },
    logger: p.logger,
  };
}

/** The browser sends the credential in this header; it is forwarded as is and never put in a URL. */
const CREDENTIAL_HEADER = 'x-invitation-credential';
const PASSED_BACK = ['content-type', 'retry-after', 'idempotent-replayed'];

function credentialHeaders(req: Request): Record<string, string> {
  const v = req.headers[CREDENTIAL_HEADER];
  return typeof v === 'string' ? { [CREDENTIAL_HEADER]: v } : {};
}

function queryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

/** The page's visitor: the booking page principal, in the workspace of a public page (an invitation's is the invitation service's to find). */
function visitor(workspaceId?: string): OnBehalfOf {
  return onBehalfOf({ principal: 'booking_page', workspaceId });
}

/** Calls the invitation service (the page backend) and passes its answer back unchanged. */
async function forward(req: Request, res: Response, client: InternalClient, target: PageTarget, headers: Record<string, string>): Promise<void> {
  const outHeaders: Record<string, string> = { ...idempotencyHeader(requestContext(req)), ...headers };
  if (req.body !== undefined) outHeaders['content-type'] = 'application/json';
  let upstream;
  try {
    upstream = await client.request<string>(req.method as HttpMethod, `${target.path}${queryOf(req)}`, {
      headers: outHeaders,
      onBehalf: visitor(target.workspaceId),
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      raw: true,
    });
  } catch (err) {
    throw err instanceof UpstreamError ? toUpstreamDomainError(err) : err;
  }
  for (const name of PASSED_BACK) {
    const v = upstream.headers[name];
    if (v !== undefined) res.setHeader(name, v);
  }
  res.setHeader('Cache-Control', 'no-store');
  setPageSecurityHeaders(res);
  res.status(upstream.status).send(upstream.body);
}

const wrap =
  (fn: (req: Request, res: Response) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    fn(req, res).catch(next);
  };

const seg = encodeURIComponent;

/** A path of the invitation service's page API, and the workspace it names, if any. */
interface PageTarget {
  path: string;
  workspaceId?: string;
}

/**
 * The hosted booking page (api-v1.md rule 10): public, no API key. Its API is under `{base}/api/…` and
 * is forwarded to the invitation service; for public pages the workspace slug is resolved here and
 * handed on as a path segment (the service trusts only the gateway). Page booking POSTs are limited
 * per client IP on the shared Postgres counters, so the public page cannot flood bookings.
 */
export function registerBookingPageRoutes(http: HttpApp, deps: BookingPageDeps): void {
  const base = deps.basePath;
  const document = bookingPageDocument(base);

  const workspaceOf = async (slug: string) => (await getWorkspaceBySlug(deps.store, slug)).id;

  const limit: RequestHandler = (req, res, next) => {
    const now = new Date();
    const policy = deps.bookingPolicy;
    const key = `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
    deps.countRequest(key, windowStart(now, policy.windowSeconds)).then(
      (count) => {
        const d = decide(count, policy, now);
        res.setHeader('RateLimit-Limit', String(d.limit));
        res.setHeader('RateLimit-Remaining', String(d.remaining));
        res.setHeader('RateLimit-Reset', String(d.resetSeconds));
        next(d.allowed ? undefined : new DomainError('rate_limited', { retryAfterSeconds: d.resetSeconds }));
      },
      (err: unknown) => {
        // The counter store failing must not take the page down: let the booking through, loudly.
        deps.logger.error('booking page rate limit counter unavailable; request allowed', { err });
        next();
      },
    );
  };

  // Page API: invitation pages (credential in a header).
  const invitationPath = (path: string): PageTarget => ({ path });
  http.route('GET', `${base}/api/invitation`, wrap((req, res) => forward(req, res, deps.invitation, invitationPath('/internal/v1/page/invitation'), credentialHeaders(req))));
  http.route('GET', `${base}/api/invitation/slots`, wrap((req, res) => forward(req, res, deps.invitation, invitationPath('/internal/v1/page/invitation/slots'), credentialHeaders(req))));
  http.route('POST', `${base}/api/invitation/bookings`, { before: [limit] }, wrap((req, res) => forward(req, res, deps.invitation, invitationPath('/internal/v1/page/invitation/bookings'), credentialHeaders(req))));

  // Page API: public Event Types by workspace slug and Event Type slug.
  const publicPath = async (req: Request, suffix: string): Promise<PageTarget> => {
    const workspaceId = await workspaceOf(String(req.params.workspace));
    return { path: `/internal/v1/workspaces/${seg(workspaceId)}/page/event-types/${seg(String(req.params.eventType))}${suffix}`, workspaceId };
  };
  http.route('GET', `${base}/api/public/:workspace/:eventType`, wrap(async (req, res) => forward(req, res, deps.invitation, await publicPath(req, ''), {})));
  http.route('GET', `${base}/api/public/:workspace/:eventType/slots`, wrap(async (req, res) => forward(req, res, deps.invitation, await publicPath(req, '/slots'), {})));
  http.route('POST', `${base}/api/public/:workspace/:eventType/bookings`, { before: [limit] }, wrap(async (req, res) => forward(req, res, deps.invitation, await publicPath(req, '/bookings'), {})));

  http.route('GET', `${base}/assets/:file`, (req, res, next) => {
    const a = bookingPageAsset(String(req.params.file));
    if (!a) return next(new DomainError('not_found'));
    sendAsset(res, 200, a, 'short');
  });

  /** The HTML shell, with the status the page's first API call will meet (404 for an unknown link). */
  const probe = async (target: PageTarget, headers: Record<string, string>): Promise<number> => {
    try {
      const answer = await deps.invitation.request('GET', target.path, { headers, raw: true, onBehalf: visitor(target.workspaceId) });
      return answer.status === 404 ? 404 : 200;
    } catch {
      return 200; // the page itself reports what it cannot load
    }
  };

  http.route('GET', `${base}/i/:credential`, wrap(async (req, res) => {
    const status = await probe(invitationPath('/internal/v1/page/invitation'), { [CREDENTIAL_HEADER]: String(req.params.credential) });
    sendAsset(res, status, document, 'no-store');
  }));

  http.route('GET', `${base}/:workspace/:eventType`, wrap(async (req, res) => {
    let status = 404;
    try {
      status = await probe(await publicPath(req, ''), {});
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'not_found')) throw err;
    }
    sendAsset(res, status, document, 'no-store');
  }));
}
