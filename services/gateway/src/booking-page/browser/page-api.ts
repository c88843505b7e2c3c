// The page API under `{base}/api/…` (docs/booking-page.md): the answers the page reads, and the one call.

export interface ErrorDetail {
  field?: string;
  issue?: string;
}

export interface ApiError {
  code: string;
  message?: string;
  details: ErrorDetail[];
}

export interface Slot {
  start_at: string;
  end_at: string;
  local_start_at: string;
}

export interface PageInfo {
  status: 'active' | 'revoked' | 'expired' | 'exhausted' | 'not_yet_valid';
  email_restricted?: boolean;
  not_before?: string;
  event_type: {
    name: string;
    description: string | null;
    duration_minutes: number;
    meeting_type: string;
    bookable: boolean;
  };
}

export interface PageBooking {
  id: string;
  start_at: string;
  end_at: string;
  guest: { name: string; email: string };
}

export interface BookingBody {
  start_at: string;
  guest: { name: string; email: string; timezone: string };
}

/** An answer: its status, its JSON body (`{}` when it has none) and its Retry-After header. */
export interface Answer<T> {
  status: number;
  body: { data?: T; error?: ApiError };
  retryAfter: string | null;
}

/** Where the page's API is and who calls it, read from the page's own URL. */
export interface PageTarget {
  /** `{base}/api/invitation` or `{base}/api/public/{workspace}/{event type}`; null for a URL of neither kind. */
  apiRoot: string | null;
  /** The invitation credential (the last segment of `/i/<credential>`), sent in a header, never in an API URL. */
  credential: string | null;
}

export function pageTarget(base: string, pathname: string): PageTarget {
  const parts = pathname.slice(base.length).split('/').filter(Boolean);
  if (parts.length === 2 && parts[0] === 'i') return { apiRoot: base + '/api/invitation', credential: parts[1] ?? null };
  if (parts.length === 2) return { apiRoot: base + '/api/public/' + parts[0] + '/' + parts[1], credential: null };
  return { apiRoot: null, credential: null };
}

export function api<T>(target: PageTarget, method: 'GET' | 'POST', path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (target.credential) headers['X-Invitation-Credential'] = target.credential;
  Object.keys(extraHeaders || {}).forEach((name) => {
    headers[name] = (extraHeaders as Record<string, string>)[name] as string;
  });
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return fetch(target.apiRoot + path, init).then((res) =>
    res
      .json()
      .catch(() => ({}))
      .then((json: Answer<T>['body']) => ({ status: res.status, body: json, retryAfter: res.headers.get('Retry-After') })),
  );
}

export function errorOf(answer: Answer<unknown>): ApiError {
  return (answer.body && answer.body.error) || { code: 'internal_error', details: [] };
}

/** The issue of an error's first detail (e.g. `uses_in_progress`, `revoked`), if any. */
export function firstIssue(err: ApiError): string | null {
  const first = err.details && err.details[0];
  return first && first.issue ? first.issue : null;
}
