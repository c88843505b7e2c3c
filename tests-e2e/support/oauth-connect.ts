import https from 'node:https';
import type { OAuthFakes } from '@sched/testing';
import type { System } from './system';
import { admin } from './tenant';

export type OAuthProvider = 'google' | 'microsoft';

/**
 * The host's browser at the provider: the fakes consent at once and redirect (302) to the redirect URI.
 * The redirect is not followed; its Location is returned. The Microsoft fake is HTTPS with a throwaway CA.
 */
async function consent(authorizationUrl: string, fakes: OAuthFakes): Promise<URL> {
  const url = new URL(authorizationUrl);
  const location =
    url.protocol === 'https:'
      ? await new Promise<string | undefined>((resolve, reject) => {
          https
            .get(url, { ca: fakes.microsoft.ca }, (res) => {
              res.resume();
              resolve(res.statusCode === 302 ? res.headers.location : undefined);
            })
            .on('error', reject);
        })
      : await fetch(url, { redirect: 'manual' }).then((res) => (res.status === 302 ? (res.headers.get('location') ?? undefined) : undefined));
  if (!location) throw new Error(`the provider gave no consent redirect for ${url.origin}${url.pathname}`);
  return new URL(location);
}

/**
 * Connects a host's calendar at Google or Microsoft (their fakes) through the system's own OAuth flow,
 * as an operator and the host would: the admin API starts it (POST …/calendar/oauth → authorization URL),
 * the provider consents and redirects the browser to the gateway's public GET /oauth/callback
 * (OAUTH_REDIRECT_URL, set by startSystem), which is opened as the browser would. Throws unless the
 * redirect goes to this system's gateway and its page says the calendar is connected.
 */
export async function connectOAuthCalendar(sys: System, fakes: OAuthFakes, workspaceId: string, hostId: string, provider: OAuthProvider, calendarId?: string): Promise<void> {
  const started = (await admin(sys, 'POST', `/admin/v1/workspaces/${workspaceId}/hosts/${hostId}/calendar/oauth`, { provider, ...(calendarId ? { calendar_id: calendarId } : {}) })) as {
    authorization_url: string;
  };
  const back = await consent(started.authorization_url, fakes);
  if (`${back.origin}${back.pathname}` !== `${sys.gatewayUrl}/oauth/callback`) throw new Error(`the consent redirect goes to ${back.origin}${back.pathname}, not the gateway's callback`);
  const page = await fetch(back, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200 || !html.includes('Calendar connected')) throw new Error(`the OAuth callback answered ${page.status}: ${html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()}`);
}
