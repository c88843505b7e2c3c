import { AddressNotAllowedError } from '@sched/address-policy';
import { ProviderError, type ProviderErrorKind } from '../../domain/calendar-provider';
import { CrossOriginRedirectError, type HttpFetch } from './http-fetch';

/** Why a request was not sent: its URL is on an origin the credentials were not given for. */
const FOREIGN_ORIGIN = 'the server sent the client to another origin';

/**
 * The fetch every tsdav call of one operation goes through (got with the outbound address policy, http-fetch.ts): it adds the Basic credentials, bounds the
 * whole operation with one deadline, and turns transport failures and the statuses that mean the
 * same thing for every request (401, 429, 5xx) into ProviderError. Other statuses reach tsdav and
 * the caller, which knows what a 404 or 412 means for its request.
 *
 * The credentials go only to `origins`, the origins of the URLs the operator gave (the server URL and
 * the calendar URL): a URL the server hands out (a .well-known redirect, a principal or calendar-home
 * href) on any other origin is never requested, so neither the credentials nor a request reach it.
 */
export function davFetch(credentials: { username: string; password: string }, signal: AbortSignal, transport: { fetch: HttpFetch; origins: readonly string[] }): typeof fetch {
  const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
  const origins = new Set(transport.origins.map((u) => new URL(u).origin));
  // Discovery tries several URLs; once the server refused the credentials, trying them elsewhere on
  // it only costs time (servers delay failed logins) and counts against the account's lockout.
  let refused = false;
  return async (input, init = {}) => {
    if (refused) throw new ProviderError('auth_failed', 'the server refused the credentials (401)');
    const url = new URL(input instanceof Request ? input.url : input);
    // Indistinct from any other failure to reach a server (calendar-connections.ts).
    if (!origins.has(url.origin)) throw new ProviderError('unavailable', FOREIGN_ORIGIN);
    const headers = new Headers(init.headers);
    headers.set('authorization', authorization);
    let res: Response;
    try {
      res = await transport.fetch(url, { ...init, headers, signal });
    } catch (err) {
      throw transportError(err, signal);
    }
    if (res.status === 401) {
      refused = true;
      return discard(res, 'auth_failed', 'the server refused the credentials (401)');
    }
    if (res.status === 429 || res.status >= 500) return discard(res, 'unavailable', `the server answered ${res.status}`);
    return res;
  };
}

async function discard(res: Response, kind: ProviderErrorKind, message: string): Promise<never> {
  await res.body?.cancel().catch(() => undefined);
  throw new ProviderError(kind, message);
}

/**
 * Every way of not reaching a server is the same `unavailable` (one 422 `unreachable` at connect
 * time: calendar-connections.ts): refused, reset, timed out, no DNS answer, a TLS failure, an address
 * the policy refuses, a redirect to another origin. Only the message, for the logs, tells them apart.
 */
function transportError(err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  const message = signal.aborted
    ? 'the server did not answer in time'
    : err instanceof AddressNotAllowedError
      ? 'the server address is not allowed (outbound address policy)'
      : err instanceof CrossOriginRedirectError
        ? 'the server redirected to another origin'
        : 'the server could not be reached';
  return new ProviderError('unavailable', message, { cause: err });
}

/**
 * Any failure of an operation as a ProviderError: ours pass through, a timeout or a broken
 * connection while reading a body is `unavailable`, and anything else (tsdav's own errors, such as
 * "cannot find principalUrl") is `otherwise`.
 */
export function asProviderError(err: unknown, signal: AbortSignal, otherwise: ProviderErrorKind): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) return new ProviderError('unavailable', 'the server did not answer in time', { cause: err });
  if (err instanceof TypeError && /fetch failed|terminated|socket/i.test(err.message)) {
    return new ProviderError('unavailable', 'the connection to the server failed', { cause: err });
  }
  return new ProviderError(otherwise, err instanceof Error ? err.message : 'provider request failed', { cause: err });
}

/** Statuses of a request on a calendar or an object in it. */
export function statusError(status: number, what: string): ProviderError {
  if (status === 404 || status === 410 || status === 403) return new ProviderError('calendar_not_found', `${what}: the server answered ${status}`);
  return new ProviderError('rejected', `${what}: the server answered ${status}`);
}
