import type { Request, RequestHandler, Response } from 'express';
import type { OAuthCallbackResult } from '@sched/contracts';
import { onBehalfOf, UpstreamError, type HttpApp, type InternalClient } from '@sched/http';
import type { Logger } from '@sched/logger';
import { setPageSecurityHeaders } from '../booking-page/booking-page.assets';
import { escapeHtml } from '../booking-page/page-html';
import { decide, windowStart, type RateLimitPolicy } from '../domain/rate-limit';

export interface OAuthCallbackDeps {
  calendarSync: InternalClient;
  countRequest: (counterKey: string, windowStart: Date) => Promise<number>;
  /** Per client IP (OAUTH_CALLBACK_RATE_LIMIT per OAUTH_CALLBACK_RATE_WINDOW_SECONDS), counted apart from the booking page's. */
  policy: RateLimitPolicy;
  logger: Logger;
}

export const OAUTH_CALLBACK_PATH = '/oauth/callback';

const PROVIDER_NAMES: Record<string, string> = { google: 'Google Calendar', microsoft: 'Microsoft 365' };

/** Largest values passed on (calendar-sync's own bounds); longer ones are refused here. */
const MAX = { state: 512, code: 4096, error: 256 };

interface Page {
  status: number;
  title: string;
  message: string;
}

/** One query parameter given once, as text; anything else (repeated, nested) counts as absent. */
function param(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A small self-contained page: no script, no style sheet, no external resource, every value escaped. */
function render(res: Response, page: Page): void {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(page.title)}</title></head>
<body><main><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p><p>You can close this window.</p></main></body>
</html>
`;
  setPageSecurityHeaders(res);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.status(page.status).send(html);
}

const notConnected = (status: number, message: string): Page => ({ status, title: 'Calendar not connected', message });

/**
 * The OAuth redirect URI (OAUTH_REDIRECT_URL of calendar-sync points here): public, no credential.
 * What the provider's redirect carried (state + code, or state + error) goes to calendar-sync's
 * internal callback, which consumes the state and saves the connection; the answer is a small HTML
 * page saying connected (provider, host) or why not. Limited per client IP, with its own setting and
 * counters (`oauth:ip:<address>`), not the booking page's. The code and state are never logged (the request log line has the route only) and never
 * shown.
 */
export function registerOAuthCallbackRoute(http: HttpApp, deps: OAuthCallbackDeps): void {
  const limit: RequestHandler = (req, res, next) => {
    const now = new Date();
    const key = `oauth:ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
    deps.countRequest(key, windowStart(now, deps.policy.windowSeconds)).then(
      (count) => {
        const d = decide(count, deps.policy, now);
        if (d.allowed) return next();
        res.setHeader('Retry-After', String(d.resetSeconds));
        render(res, notConnected(429, 'Too many attempts from this address; wait a minute and open the link again.'));
      },
      (err: unknown) => {
        deps.logger.error('oauth callback rate limit counter unavailable; request allowed', { err });
        next();
      },
    );
  };

  http.route('GET', OAUTH_CALLBACK_PATH, { before: [limit] }, (req, res, next) => {
    callback(req, deps).then((page) => render(res, page), next);
  });
}

async function callback(req: Request, deps: OAuthCallbackDeps): Promise<Page> {
  const state = param(req, 'state');
  const code = param(req, 'code');
  const error = param(req, 'error');
  if (!state || (!code && !error) || state.length > MAX.state || (code?.length ?? 0) > MAX.code || (error?.length ?? 0) > MAX.error) {
    return notConnected(400, 'This link is incomplete or malformed. Ask for a new connection link.');
  }
  let answer;
  try {
    answer = await deps.calendarSync.request<{ data?: OAuthCallbackResult; error?: { code?: string; message?: string; details?: Array<{ field?: string; issue?: string }> } }>(
      'POST',
      '/internal/v1/oauth/callback',
      // The gateway itself (no visitor principal): the only caller calendar-sync accepts here.
      { json: { state, ...(error ? { error } : { code }) }, onBehalf: onBehalfOf({ principal: 'service' }) },
    );
  } catch (err) {
    if (err instanceof UpstreamError) return notConnected(502, 'The calendar service could not be reached. Ask for a new connection link and try again later.');
    throw err;
  }
  const body = answer.body;
  if (answer.status === 200 && body?.data) {
    const d = body.data;
    return { status: 200, title: 'Calendar connected', message: `${PROVIDER_NAMES[d.provider] ?? d.provider} is now connected for ${d.host_name}.` };
  }
  if (answer.status === 404) return notConnected(404, 'The host of this link no longer exists.');
  // calendar-sync's messages name no identifier, URL or credential (docs/calendar-sync.md); anything else is generic.
  if (answer.status === 422 && typeof body?.error?.message === 'string') return notConnected(422, body.error.message);
  if (answer.status === 400) return notConnected(400, 'This link is incomplete or malformed. Ask for a new connection link.');
  return notConnected(502, 'The calendar service could not finish connecting. Ask for a new connection link and try again later.');
}
