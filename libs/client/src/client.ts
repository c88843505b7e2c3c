import { BookingInvitationsResource, BookingsResource, EventTypesResource } from './resources';
import { Transport, type ResponseInfo } from './transport';

export interface ClientOptions {
  /** The gateway, e.g. `https://scheduling.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** `sk_live_…` / `sk_test_…`; server-side secret storage only. */
  apiKey: string;
  /** Retries after the first attempt on 429/502/503/504 and network errors. Default 3. */
  maxRetries?: number;
  /** Per attempt. Default 30 000 ms. */
  timeoutMs?: number;
  /** First backoff step when the server sends no Retry-After; doubles per retry. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts; a longer Retry-After ends the retries. Default 30 000 ms. */
  maxRetryDelayMs?: number;
  /** Called after every HTTP attempt (status, request id, replay flag). */
  onResponse?: (info: ResponseInfo) => void;
  /** For tests: replaces global fetch / the wait between retries. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** api-v1.md, Authentication, rule 3. */
export const BROWSER_REFUSAL =
  '@sched/client is server-side only. api-v1.md, Authentication, rule 3: "A key must never appear in browser code. ' +
  'A browser must not call the API with a key; a custom booking UI submits through the caller\'s own backend."';

function assertServerSide(): void {
  const g = globalThis as { window?: unknown; document?: unknown };
  if (typeof g.window !== 'undefined' || typeof g.document !== 'undefined') throw new Error(BROWSER_REFUSAL);
}

/** Typed client of the Scheduling Service API v1 (contract 1.0.0). */
export class SchedulingClient {
  readonly eventTypes: EventTypesResource;
  readonly bookings: BookingsResource;
  readonly bookingInvitations: BookingInvitationsResource;

  constructor(options: ClientOptions) {
    assertServerSide();
    if (!options.apiKey) throw new TypeError('apiKey is required');
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError('baseUrl must use http or https');
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be a whole number, 0 or more');

    const transport = new Transport({
      baseUrl: `${base.origin}${base.pathname.replace(/\/+$/, '')}`,
      apiKey: options.apiKey,
      maxRetries,
      timeoutMs: options.timeoutMs ?? 30_000,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      onResponse: options.onResponse,
    });
    this.eventTypes = new EventTypesResource(transport);
    this.bookings = new BookingsResource(transport);
    this.bookingInvitations = new BookingInvitationsResource(transport);
  }
}

export function createClient(options: ClientOptions): SchedulingClient {
  return new SchedulingClient(options);
}
