import { oauthCallbackBodySchema, startCalendarOAuthBodySchema, toTimestamp, type CalendarOAuthStart, type OAuthCallbackResult } from '@sched/contracts';
import { parseBody, sendData, type HttpApp } from '@sched/http';
import { completeCalendarOAuth, startCalendarOAuth, type OAuthCallbackDeps } from '../domain/calendar-oauth';
import { pathId, pathWorkspace } from './path-params';

/** Starts the OAuth connect flow of a host's Google or Microsoft calendar (docs/calendar-sync.md, "Connecting Google / Microsoft"). */
export function registerCalendarOAuthRoutes(http: HttpApp, deps: OAuthCallbackDeps): void {
  http.route('POST', '/admin/v1/workspaces/:ws/hosts/:host/calendar/oauth', async (req, res) => {
    const ws = pathWorkspace(req);
    const host = pathId(req, 'host', 'hst');
    const body = parseBody(startCalendarOAuthBodySchema, req);
    const started = await startCalendarOAuth(deps, { workspaceId: ws, hostId: host, body });
    const out: CalendarOAuthStart = { provider: started.provider, authorization_url: started.authorizationUrl, expires_at: toTimestamp(started.expiresAt) };
    sendData(res, 201, out);
  });

  // The gateway's public GET /oauth/callback hands over what the provider's redirect carried.
  http.route('POST', '/internal/v1/oauth/callback', async (req, res) => {
    const body = parseBody(oauthCallbackBodySchema, req);
    const { connection, provider, hostName } = await completeCalendarOAuth(deps, body);
    const out: OAuthCallbackResult = { provider, host_id: connection.hostId, host_name: hostName, connection_id: connection.id };
    sendData(res, 200, out);
  });
}
