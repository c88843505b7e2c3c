import { ProviderError, type CalendarAccess, type ProviderName } from '../../domain/calendar-provider';
import { noteProviderFailure, passwordAad, tokenAad } from '../../domain/connection-status';
import type { ConnectionRef, SecretSealer, Store, StoredTokens, TokenRows } from '../../domain/ports';
import type { AccessTokenSource } from './access-tokens';

/** A provider's token endpoint (GoogleOAuth, MicrosoftOAuth): a refresh token exchanged for an access token. */
export interface TokenEndpoint {
  refresh(
    refreshToken: string,
    signal?: AbortSignal,
  ): Promise<{
    accessToken: string;
    /** null: the answer had no lifetime (DEFAULT_LIFETIME_MS is assumed). */
    expiresAt: Date | null;
    /** A new refresh token replacing the one sent (rotation); null or absent: keep using the old one. */
    refreshToken?: string | null;
  }>;
}

export interface ConnectionTokenStoreOptions {
  rows: TokenRows;
  sealer: SecretSealer;
  /** The token endpoint of each OAuth provider configured. */
  endpoints: Partial<Record<ProviderName, TokenEndpoint>>;
  /** Where a revoked grant marks the connection broken (the domain's noteProviderFailure). */
  store: Pick<Store, 'findConnection' | 'setConnectionStatus'>;
  /** A token is used only while it stays valid at least this long. Default 5 minutes. */
  marginMs?: number;
  /** Longest wait for another replica's refresh (the row lock). Default 5 s. */
  lockTimeoutMs?: number;
  /** Told when marking a connection broken did not work; never given a token. */
  onWarning?: (message: string, meta: Record<string, unknown>) => void;
  now?: () => number;
}

/** Assumed lifetime of a token whose answer carried none (Google's and Microsoft's are about an hour). */
const DEFAULT_LIFETIME_MS = 3_600_000;
/** Most connections whose current token this process keeps in memory. */
const MAX_MEMORY = 10_000;
/** How long marking a revoked connection broken may hold up the failing operation. */
const MARK_BROKEN_WAIT_MS = 1000;

interface Remembered {
  /** The grant (the connection's password) the token belongs to: a replaced connection does not match. */
  grant: string;
  token: string;
  expiresAt: number;
}

/**
 * The access tokens of Google and Microsoft connections (AccessTokenSource): kept sealed in
 * `connection_tokens` (store/token.queries.ts) and in this process's memory, used while valid for at
 * least `marginMs`, refreshed otherwise. A refresh is made by one replica at a time: under the row
 * lock of the connection's token state, the state is read again (another replica may have refreshed
 * meanwhile: its token is used), and only then is the token endpoint called and its answer stored,
 * with the refresh token it rotated in, before the lock is released. In one process, concurrent
 * refreshes of one connection share one call.
 *
 * The refresh token is the connection's password, or the one the token endpoint handed back in its
 * place. A grant the token endpoint no longer honours (`reauthorization_required`) marks the connection
 * broken (as the domain does for refused credentials: status `error`, `calendar.connection_updated`)
 * and is rethrown. Credentials being verified before a connection exists (no `access.connection`) use
 * the access token the connect flow just got (`access.accessToken`), else are refreshed directly,
 * nothing kept. Nothing here logs a token.
 */
export class ConnectionTokenStore implements AccessTokenSource {
  private readonly memory = new Map<string, Remembered>();
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly marginMs: number;
  private readonly lockTimeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: ConnectionTokenStoreOptions) {
    this.marginMs = opts.marginMs ?? 5 * 60_000;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 5000;
    this.now = opts.now ?? Date.now;
  }

  async accessToken(access: CalendarAccess, signal?: AbortSignal): Promise<string> {
    const conn = access.connection;
    // The connect flow verifies the calendar with the token its code exchange just gave.
    if (!conn && access.accessToken) return access.accessToken;
    if (!conn) return (await this.endpoint(access).refresh(access.password, signal)).accessToken;
    const remembered = this.memory.get(conn.id);
    if (remembered && remembered.grant === access.password && this.usable(remembered.expiresAt)) return remembered.token;
    const state = this.checked(access, await this.opts.rows.read(conn));
    const stored = this.storedToken(conn, state);
    if (stored && this.usable(stored.expiresAt)) return this.remember(conn, access.password, stored);
    return this.refreshOnce(access, conn, null, signal);
  }

  async refreshed(access: CalendarAccess, rejected: string, signal?: AbortSignal): Promise<string> {
    const conn = access.connection;
    if (!conn) return (await this.endpoint(access).refresh(access.password, signal)).accessToken;
    if (this.memory.get(conn.id)?.token === rejected) this.memory.delete(conn.id);
    const state = this.checked(access, await this.opts.rows.read(conn));
    const stored = this.storedToken(conn, state);
    // Another replica (or operation) has replaced the refused token meanwhile: use that one.
    if (stored && stored.token !== rejected && stored.expiresAt > this.now()) return this.remember(conn, access.password, stored);
    return this.refreshOnce(access, conn, rejected, signal);
  }

  /** One refresh per connection at a time in this process; a caller that must replace `rejected` never gets it back. */
  private async refreshOnce(access: CalendarAccess, conn: ConnectionRef, rejected: string | null, signal?: AbortSignal): Promise<string> {
    const running = this.inFlight.get(conn.id);
    if (running) {
      const token = await running;
      if (token !== rejected) return token;
    }
    const work = this.refreshLocked(access, conn, rejected, signal).finally(() => this.inFlight.delete(conn.id));
    this.inFlight.set(conn.id, work);
    return work;
  }

  private async refreshLocked(access: CalendarAccess, conn: ConnectionRef, rejected: string | null, signal?: AbortSignal): Promise<string> {
    try {
      return await this.opts.rows.whileLocked(conn, this.lockTimeoutMs, async (locked, save) => {
        const state = this.checked(access, locked);
        const stored = this.storedToken(conn, state);
        // Refreshed by another replica while this one waited for the lock.
        if (stored && this.usable(stored.expiresAt) && stored.token !== rejected) return this.remember(conn, access.password, stored);
        const rotated = state.refreshTokenSealed === null ? null : this.open(state.refreshTokenSealed, conn, 'refresh token');
        const answer = await this.endpoint(access).refresh(rotated ?? access.password, signal);
        const expiresAt = answer.expiresAt?.getTime() ?? this.now() + DEFAULT_LIFETIME_MS;
        const aad = tokenAad(conn.workspaceId, conn.hostId);
        const nextRefresh = answer.refreshToken ?? null;
        await save({
          accessTokenSealed: this.opts.sealer.seal(answer.accessToken, aad),
          accessTokenExpiresAt: new Date(expiresAt),
          refreshTokenSealed: nextRefresh !== null ? this.opts.sealer.seal(nextRefresh, aad) : state.refreshTokenSealed,
        });
        return this.remember(conn, access.password, { token: answer.accessToken, expiresAt });
      });
    } catch (err) {
      if (err instanceof ProviderError) {
        if (err.kind === 'reauthorization_required') await this.markBroken(conn, err);
        throw err;
      }
      if ((err as { code?: unknown } | null)?.code === '55P03') {
        throw new ProviderError('unavailable', 'another replica is refreshing the access token and did not finish in time');
      }
      throw err;
    }
  }

  /** The grant the caller holds must still be the connection's (not replaced meanwhile), and the connection must exist. */
  private checked(access: CalendarAccess, state: StoredTokens | null): StoredTokens {
    const conn = access.connection!;
    if (!state) throw new ProviderError('calendar_not_found', 'the calendar connection no longer exists');
    if (this.open(state.passwordSealed, conn, 'password', passwordAad(conn.workspaceId, conn.hostId)) !== access.password) {
      throw new ProviderError('unavailable', 'the calendar connection was replaced meanwhile');
    }
    return state;
  }

  /** The stored access token, or null when there is none or it does not open (then it is refreshed). */
  private storedToken(conn: ConnectionRef, state: StoredTokens): { token: string; expiresAt: number } | null {
    if (state.accessTokenSealed === null || state.accessTokenExpiresAt === null) return null;
    try {
      return { token: this.opts.sealer.open(state.accessTokenSealed, tokenAad(conn.workspaceId, conn.hostId)), expiresAt: state.accessTokenExpiresAt.getTime() };
    } catch {
      return null;
    }
  }

  private open(sealed: string, conn: ConnectionRef, what: string, aad = tokenAad(conn.workspaceId, conn.hostId)): string {
    try {
      return this.opts.sealer.open(sealed, aad);
    } catch (err) {
      // The SecretsError names the key id the value needs, never a key or the value.
      throw new ProviderError('auth_failed', `the stored ${what} cannot be decrypted with the configured keys: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private usable(expiresAt: number): boolean {
    return expiresAt - this.now() >= this.marginMs;
  }

  private remember(conn: ConnectionRef, grant: string, t: { token: string; expiresAt: number }): string {
    if (this.memory.size >= MAX_MEMORY && !this.memory.has(conn.id)) this.memory.clear();
    this.memory.set(conn.id, { grant, token: t.token, expiresAt: t.expiresAt });
    return t.token;
  }

  private endpoint(access: CalendarAccess): TokenEndpoint {
    const endpoint = this.opts.endpoints[access.provider];
    if (!endpoint) throw new ProviderError('rejected', `no OAuth token endpoint is configured for ${access.provider}`);
    return endpoint;
  }

  /**
   * The revoked grant breaks the connection, as any refused credentials do (noteProviderFailure). Not
   * waited for past MARK_BROKEN_WAIT_MS: the caller may hold the connection row in its own transaction
   * (the domain then marks it itself when the error reaches it); the update still lands afterwards.
   */
  private async markBroken(ref: ConnectionRef, err: ProviderError): Promise<void> {
    this.memory.delete(ref.id);
    const mark = (async () => {
      const conn = await this.opts.store.findConnection(ref.workspaceId, ref.hostId);
      if (conn && conn.id === ref.id) await noteProviderFailure(this.opts.store, conn, err);
    })().catch((e: unknown) => this.opts.onWarning?.('could not mark a calendar connection broken after its grant was revoked', { connection: ref.id, error: e instanceof Error ? e.message : String(e) }));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([mark, new Promise<void>((r) => (timer = setTimeout(r, MARK_BROKEN_WAIT_MS)))]).finally(() => clearTimeout(timer));
  }
}
