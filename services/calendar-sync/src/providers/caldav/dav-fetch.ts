import { ProviderError, type ProviderErrorKind } from '../../domain/calendar-provider';
import { httpFetch } from './http-fetch';

/**
 * The fetch every tsdav call of one operation goes through (over node:http, http-fetch.ts): it adds the Basic credentials, bounds the
 * whole operation with one deadline, and turns transport failures and the statuses that mean the
 * same thing for every request (401, 429, 5xx) into ProviderError. Other statuses reach tsdav and
 * the caller, which knows what a 404 or 412 means for its request.
 */
export function davFetch(credentials: { username: string; password: string }, signal: AbortSignal): typeof fetch {
  const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
  // Discovery tries several URLs; once the server refused the credentials, trying them elsewhere on
  // it only costs time (servers delay failed logins) and counts against the account's lockout.
  let refused = false;
  return async (input, init = {}) => {
    if (refused) throw new ProviderError('auth_failed', 'the server refused the credentials (401)');
    const headers = new Headers(init.headers);
    headers.set('authorization', authorization);
    let res: Response;
    try {
      res = await httpFetch(input, { ...init, headers, signal });
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

function transportError(err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError('unavailable', signal.aborted ? 'the server did not answer in time' : 'the server could not be reached', { cause: err });
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
