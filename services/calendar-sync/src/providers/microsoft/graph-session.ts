import { setTimeout as sleep } from 'node:timers/promises';
import { AuthenticationHandler, Client, GraphError, type Context, type GraphRequest, type Middleware } from '@microsoft/microsoft-graph-client';
import { ProviderError, type CalendarAccess } from '../../domain/calendar-provider';
import type { AccessTokenSource } from '../oauth/access-tokens';
import type { HttpsTransport } from './https-transport';

/** Throttling answers Graph documents as "retry after Retry-After" (the same set the SDK's RetryHandler handles). */
const RETRYABLE = new Set([429, 503, 504]);
/** Retries after the first attempt, per request. */
export const MAX_RETRIES = 3;
/**
 * Every request: event times in UTC (calendarView and event answers alike) and immutable event ids,
 * so a stored event id survives the event being moved inside the mailbox.
 */
const PREFER = 'outlook.timezone="UTC", IdType="ImmutableId"';
/** Backoff when a throttling answer carries no Retry-After: 0.5 s, 1 s, 2 s. */
const BACKOFF_MS = [500, 1000, 2000];

export interface SessionOptions {
  tokens: AccessTokenSource;
  transport: HttpsTransport;
  /** Bound on the whole operation: every request, retry wait and token call of it. */
  timeoutMs: number;
}

/** The Graph root of a connection (`access.url`): https, no path. Version segments are added by the client. */
export function graphRoot(access: CalendarAccess): URL {
  let root: URL;
  try {
    root = new URL(access.url);
  } catch {
    throw new ProviderError('rejected', 'the Graph URL of the connection is not a URL');
  }
  if (root.protocol !== 'https:') throw new ProviderError('rejected', 'the Graph URL of the connection is not https');
  return new URL(root.origin);
}

/**
 * The Graph client's last middleware: sends the request through our HTTPS transport (which trusts only
 * the CA it was given) instead of the global fetch, with the operation's AbortSignal.
 */
class TransportHandler implements Middleware {
  constructor(
    private readonly transport: HttpsTransport,
    private readonly signal: AbortSignal,
  ) {}

  async execute(context: Context): Promise<void> {
    const url = typeof context.request === 'string' ? context.request : context.request.url;
    const init = context.options ?? {};
    const headers: Record<string, string> = {};
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => (headers[name] = value));
    const body = typeof init.body === 'string' ? init.body : undefined;
    context.response = await this.transport(url, { method: init.method ?? 'GET', headers, body, signal: this.signal });
  }
}

/**
 * One adapter operation against Graph: one deadline, one access token (asked for once), and the
 * request policy every call of the operation shares.
 *
 * Who retries: this session, not the SDK. The middleware chain is built here (AuthenticationHandler,
 * then our transport) without the SDK's RetryHandler, so no request is retried twice over. The reason
 * is the deadline: the RetryHandler would wait out any Retry-After (up to 180 s) three times, while an
 * operation here must end within PROVIDER_TIMEOUT_MS so that a busy read fails closed in time and a
 * write goes back to the consumer's own retry schedule. So 429/503/504 are retried at most
 * MAX_RETRIES times, each after Retry-After (or a short backoff), and only when that wait fits in what
 * is left of the deadline; otherwise the operation ends at once as `unavailable`. The same loop does
 * the one refresh after a 401.
 */
export class GraphSession {
  private readonly client: Client;
  private readonly signal: AbortSignal;
  private readonly deadline: number;
  private token: string | null = null;
  private refreshed = false;
  readonly root: URL;

  constructor(
    private readonly access: CalendarAccess,
    private readonly opts: SessionOptions,
  ) {
    this.root = graphRoot(access);
    this.deadline = Date.now() + opts.timeoutMs;
    this.signal = AbortSignal.timeout(opts.timeoutMs);
    const hostname = this.root.hostname;
    this.client = Client.initWithMiddleware({
      baseUrl: this.root.href,
      defaultVersion: 'v1.0',
      // The SDK sends the bearer token only to Graph's own hosts and these (https, host without port).
      customHosts: new Set([hostname]),
      middleware: [new AuthenticationHandler({ getAccessToken: async () => this.currentToken() }), new TransportHandler(opts.transport, this.signal)],
    });
  }

  private currentToken(): string {
    if (this.token === null) throw new Error('no access token yet');
    return this.token;
  }

  /** A Graph URL handed out by Graph (@odata.nextLink) may be followed only on the connection's own origin. */
  sameOrigin(url: string): boolean {
    try {
      return new URL(url).origin === this.root.origin;
    } catch {
      return false;
    }
  }

  /**
   * Sends one request (`build` makes it anew for every attempt) under the operation's policy. Answers
   * other than 401 and the retryable ones come back as the SDK's GraphError for the caller to read.
   */
  async call<T>(build: (client: Client) => GraphRequest, send: (req: GraphRequest) => Promise<T>): Promise<T> {
    if (this.token === null) this.token = await this.bounded(this.opts.tokens.accessToken(this.access));
    for (let retries = 0; ; ) {
      try {
        return await send(build(this.client).header('Prefer', PREFER));
      } catch (err) {
        if (!(err instanceof GraphError)) throw err;
        if (this.signal.aborted || err.statusCode < 100) throw transportFailure(err, this.signal);
        if (err.statusCode === 401) {
          if (this.refreshed) throw new ProviderError('auth_failed', 'Graph refused a freshly refreshed access token (401)', { cause: err });
          // Once per operation: report the refused token and retry with the one the token source gives.
          this.refreshed = true;
          this.token = await this.bounded(this.opts.tokens.refreshed(this.access, this.token));
          continue;
        }
        if (!RETRYABLE.has(err.statusCode)) throw err;
        const wait = retryWait(err.headers, retries);
        if (retries >= MAX_RETRIES) throw new ProviderError('unavailable', `Graph answered ${err.statusCode} after ${MAX_RETRIES} retries`, { cause: err });
        if (Date.now() + wait >= this.deadline) {
          throw new ProviderError('unavailable', `Graph answered ${err.statusCode}; its Retry-After (${wait} ms) does not fit in the operation's deadline`, { cause: err });
        }
        retries += 1;
        await sleep(wait, undefined, { signal: this.signal }).catch(() => undefined);
        if (this.signal.aborted) throw new ProviderError('unavailable', 'Graph did not answer in time');
      }
    }
  }

  /** A token-source call under the operation's deadline (its ProviderErrors pass through). */
  private async bounded<T>(work: Promise<T>): Promise<T> {
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new ProviderError('unavailable', 'the access token could not be had in time'));
      if (this.signal.aborted) fail();
      else this.signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => undefined);
    return Promise.race([work, aborted]);
  }
}

/** Retry-After in seconds or as an HTTP date; without one, a short exponential backoff. */
export function retryWait(headers: Headers | undefined, retries: number): number {
  const value = headers?.get('retry-after')?.trim();
  if (value) {
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return BACKOFF_MS[Math.min(retries, BACKOFF_MS.length - 1)]!;
}

/** The SDK reports a request that got no answer as a GraphError without an HTTP status. */
function transportFailure(err: GraphError, signal: AbortSignal): ProviderError {
  return new ProviderError('unavailable', signal.aborted ? 'Graph did not answer in time' : 'Graph could not be reached', { cause: err });
}

/**
 * What a Graph answer means for a request on the calendar or an event in it: 404 (ErrorItemNotFound)
 * and 403 (ErrorAccessDenied) = the calendar is gone or not ours to use; other 5xx = unavailable;
 * any other 4xx = the request was refused.
 */
export function graphError(err: unknown, what: string): unknown {
  if (!(err instanceof GraphError)) return err;
  const code = err.code ? ` ${err.code}` : '';
  if (err.statusCode === 404 || err.statusCode === 403) return new ProviderError('calendar_not_found', `${what}: Graph answered ${err.statusCode}${code}`, { cause: err });
  if (err.statusCode >= 500 || RETRYABLE.has(err.statusCode)) return new ProviderError('unavailable', `${what}: Graph answered ${err.statusCode}${code}`, { cause: err });
  return new ProviderError('rejected', `${what}: Graph answered ${err.statusCode}${code}`, { cause: err });
}

export function isGraphStatus(err: unknown, status: number): boolean {
  return err instanceof GraphError && err.statusCode === status;
}
