// The confirm POST's Idempotency-Key (docs/booking-page.md "Booking once"): a per-form token, random,
// kept in this tab's sessionStorage with the body it was sent with. The same booking sent again (a
// double submit, a retry, the resend after a reload) carries the same key, so the service answers the
// first result instead of booking twice; another booking (another time, name or email) gets a new token.

/** `sending` is true from the POST until its answer, so a reload resends it. */
export interface BookingAttempt {
  key: string;
  /** The JSON body, as sent. */
  body: string;
  sending?: boolean;
}

export class AttemptStore {
  private readonly item: string;
  private inMemory: BookingAttempt | null = null;

  constructor(pagePath: string) {
    this.item = 'sched.booking-page.attempt:' + pagePath;
  }

  load(): BookingAttempt | null {
    try {
      const stored = sessionStorage.getItem(this.item);
      return stored ? (JSON.parse(stored) as BookingAttempt) : null;
    } catch {
      return this.inMemory; // storage disabled: the token still covers this page's own retries
    }
  }

  save(attempt: BookingAttempt | null): void {
    this.inMemory = attempt;
    try {
      if (attempt) sessionStorage.setItem(this.item, JSON.stringify(attempt));
      else sessionStorage.removeItem(this.item);
    } catch {
      /* memory only */
    }
  }
}

// crypto.getRandomValues works on plain http too (randomUUID needs a secure context).
export function newToken(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return 'page_' + Array.prototype.map.call(bytes, (b: number) => (b < 16 ? '0' : '') + b.toString(16)).join('');
}
