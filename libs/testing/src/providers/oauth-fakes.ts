import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeGoogle, type FakeGoogle } from './fake-google';
import { startFakeMicrosoft, type FakeMicrosoft } from './fake-microsoft';

export interface OAuthFakes {
  google: FakeGoogle;
  microsoft: FakeMicrosoft;
  /** calendar-sync's environment with both OAuth clients configured against the fakes (the Microsoft fake's CA trusted through MICROSOFT_CA_FILE). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Both providers' fakes, and the configuration that points calendar-sync's Google and Microsoft clients at them. */
export async function startOAuthFakes(): Promise<OAuthFakes> {
  const [google, microsoft] = await Promise.all([startFakeGoogle(), startFakeMicrosoft()]);
  const caDir = mkdtempSync(path.join(os.tmpdir(), 'cal-oauth-ca-'));
  writeFileSync(path.join(caDir, 'ca.pem'), microsoft.ca);
  const authority = new URL(microsoft.authority);
  return {
    google,
    microsoft,
    env: {
      GOOGLE_OAUTH_CLIENT_ID: google.clientId,
      GOOGLE_OAUTH_CLIENT_SECRET: google.clientSecret,
      GOOGLE_API_ROOT_URL: google.rootUrl,
      GOOGLE_OAUTH_AUTH_URL: google.endpoints.oauth2AuthBaseUrl,
      GOOGLE_OAUTH_TOKEN_URL: google.endpoints.oauth2TokenUrl,
      GOOGLE_OAUTH_REVOKE_URL: google.endpoints.oauth2RevokeUrl,
      MICROSOFT_OAUTH_CLIENT_ID: microsoft.clientId,
      MICROSOFT_OAUTH_CLIENT_SECRET: microsoft.clientSecret,
      MICROSOFT_AUTHORITY_URL: authority.origin,
      MICROSOFT_OAUTH_TENANT: authority.pathname.slice(1),
      MICROSOFT_CA_FILE: path.join(caDir, 'ca.pem'),
      MICROSOFT_GRAPH_URL: microsoft.url,
    },
    async close() {
      await Promise.all([google.close(), microsoft.close()]);
      rmSync(caDir, { recursive: true, force: true });
    },
  };
}
