import type { CalendarAccess } from '../../src/domain/calendar-provider';
import type { AccessTokenSource } from '../../src/providers/oauth/access-tokens';
import type { MicrosoftOAuth } from '../../src/providers/microsoft/oauth';

/**
 * The token source of the tests: one connection's access token kept in memory, refreshed through
 * MicrosoftOAuth with the refresh token in `access.password` (what the connection's token store will
 * do, without the row lock). Counts refreshes.
 */
export class MemoryTokenSource implements AccessTokenSource {
  token: string | null = null;
  refreshes = 0;

  constructor(private readonly oauth: MicrosoftOAuth) {}

  async accessToken(access: CalendarAccess): Promise<string> {
    this.token ??= await this.refresh(access);
    return this.token;
  }

  async refreshed(access: CalendarAccess, rejected: string): Promise<string> {
    // Another caller may have replaced the refused token already.
    if (this.token !== null && this.token !== rejected) return this.token;
    this.token = await this.refresh(access);
    return this.token;
  }

  private async refresh(access: CalendarAccess): Promise<string> {
    this.refreshes += 1;
    return (await this.oauth.refresh(access.password)).accessToken;
  }
}
