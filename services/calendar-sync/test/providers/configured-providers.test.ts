import { secretBoxFromEnv } from '@sched/secrets';
import { TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { readConfig } from '../../src/config';
import type { TokenRows } from '../../src/domain/ports';
import { GoogleCalendarProvider } from '../../src/providers/google/google-provider';
import { MicrosoftProvider } from '../../src/providers/microsoft/microsoft-provider';
import { configuredOAuthProviders } from '../../src/providers/oauth/configured-providers';
import { SECRETS_KEY } from '../support/harness';

/** Which OAuth adapters the configuration turns on (app.ts registers exactly these). */

const base = { SECRETS_KEY, INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, NODE_ENV: 'test' };
const deps = {
  rows: {} as TokenRows,
  sealer: secretBoxFromEnv({ SECRETS_KEY }),
  store: { findConnection: async () => null, setConnectionStatus: async () => false },
  onWarning: () => undefined,
};

describe('configuredOAuthProviders', () => {
  it('registers no OAuth provider without client credentials', () => {
    const oauth = configuredOAuthProviders(readConfig(base), deps);
    expect(oauth.adapters).toEqual({});
    expect(oauth.tokens).toBeNull();
  });

  it('registers each provider whose client id and secret are set, and only those', () => {
    const google = configuredOAuthProviders(readConfig({ ...base, GOOGLE_OAUTH_CLIENT_ID: 'id', GOOGLE_OAUTH_CLIENT_SECRET: 'secret' }), deps);
    expect(Object.keys(google.adapters)).toEqual(['google']);
    expect(google.adapters.google).toBeInstanceOf(GoogleCalendarProvider);
    const both = configuredOAuthProviders(
      readConfig({ ...base, GOOGLE_OAUTH_CLIENT_ID: 'id', GOOGLE_OAUTH_CLIENT_SECRET: 'secret', MICROSOFT_OAUTH_CLIENT_ID: 'mid', MICROSOFT_OAUTH_CLIENT_SECRET: 'msecret' }),
      deps,
    );
    expect(Object.keys(both.adapters).sort()).toEqual(['google', 'microsoft']);
    expect(both.adapters.microsoft).toBeInstanceOf(MicrosoftProvider);
    both.close();
  });

  it('defaults: tenant common on login.microsoftonline.com', () => {
    const config = readConfig(base);
    expect(config.MICROSOFT_OAUTH_TENANT).toBe('common');
    expect(config.MICROSOFT_AUTHORITY_URL).toBe('https://login.microsoftonline.com');
  });

  it('refuses half an OAuth client (an id without its secret) at start', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => {
      throw new Error('exit');
    });
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(() => readConfig({ ...base, GOOGLE_OAUTH_CLIENT_ID: 'id' })).toThrow('exit');
      expect(String(stderr.mock.calls[0]?.[0])).toContain('GOOGLE_OAUTH_CLIENT_SECRET: set together with GOOGLE_OAUTH_CLIENT_ID');
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
  });
});
