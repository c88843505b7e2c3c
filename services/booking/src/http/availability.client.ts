import { DomainError, isAcceptableRequestId, parseRetryAfterSeconds, slotChecksResponseSchema, toTimestamp, type SlotCheckResponse } from '@sched/contracts';
import { createGroupCommit } from '@sched/group-commit';
import { createInternalClient, onBehalfOf, UpstreamError, type CredentialSigner, type OnBehalfOf, type UpstreamErrorKind } from '@sched/http';
import type { Logger } from '@sched/logger';
import type { SlotChecker } from '../domain/ports';

/**
 * The availability service's slot check, failing closed: without a trustworthy "yes" nothing is booked.
 * - 503 from availability (calendar provider down, no fresh snapshot): `503 calendar_unavailable` with its Retry-After;
 *   availability's own store down (`503 service_unavailable`, decisions.md §2) is passed on as that, with its Retry-After.
 * - availability unreachable, too slow, or answering something off-contract: `502` / `504 upstream_unavailable`
 *   (Retry-After: 1). That is the contract's code for "a service could not be reached in time"; it is not
 *   calendar_unavailable, because the calendar may be fine. Both are 5xx, so no idempotency key is used up.
 *
 * Concurrent checks share one call (issue 18: "how many hops and round trips a create's slot check takes"):
 * availability's `POST …/slot-checks` (contracts slotChecksRequestSchema), through libs/group-commit. No
 * timer: a check with nothing in flight goes out at once, alone; checks asked while `batchesInFlight`
 * calls of their lane are out wait and go together as the lane's next call (at most `batchMax`). A lane is
 * one workspace and one principal (kind, API key and its scopes, invitation): the internal credential
 * names one principal, so only checks on behalf of the same one share a call; the credential is the first
 * check's (its request id), and every check's request id travels in its item, for availability's logs.
 * Each check gets what the single call would have given it: an item's answer, its calendar_unavailable
 * (the item error), or, when the call fails as a whole, the failure above, for each of its checks. One
 * check waits at most `timeoutMs` in all (waiting for its call included), then 504.
 */
export interface SlotCheckerOptions {
  baseUrl: string;
  timeoutMs: number;
  logger: Logger;
  signer: CredentialSigner;
  /** Calls of one lane at availability at once (SLOT_CHECK_BATCHES_IN_FLIGHT). */
  batchesInFlight: number;
  /** Most checks in one call (SLOT_CHECK_BATCH_MAX; availability takes up to SLOT_CHECKS_MAX). */
  batchMax: number;
}

/** One check as sent (contracts slotCheckItemSchema). */
interface SlotCheckItem {
  event_type_id: string;
  start_at: string;
  exclude_booking_id?: string;
  request_id?: string;
}

interface PendingCheck {
  workspaceId: string;
  /** On whose behalf: the create's caller, captured when it asked (the call may go out from another request's turn). */
  who: OnBehalfOf;
  item: SlotCheckItem;
}

/** What one check gets: an answer, or the error to fail it with and the line to log for it (in its own request's log context). */
type Outcome = { answer: SlotCheckResponse } | { error: DomainError; log?: { level: 'warn' | 'error'; message: string; meta: Record<string, unknown> } };

/** Checks that may share a call: one workspace, one principal; only the request id may differ. */
function laneOf({ who }: PendingCheck): string {
  return `${who.workspaceId}\u0000${who.principal}\u0000${who.apiKeyId ?? ''}\u0000${who.invitationId ?? ''}\u0000${who.scopes?.join(' ') ?? ''}`;
}

const failed = (kind: UpstreamErrorKind): Outcome => ({
  error: new DomainError('upstream_unavailable', { status: kind === 'timeout' ? 504 : 502, retryAfterSeconds: 1 }),
  log: { level: 'warn', message: 'availability slot check failed; failing closed', meta: { kind } },
});
const offContract = (why: string, meta: Record<string, unknown> = {}): Outcome => ({
  error: new DomainError('upstream_unavailable', { status: 502, retryAfterSeconds: 1 }),
  log: { level: 'error', message: 'availability slot check answered off-contract', meta: { why, ...meta } },
});

export function createSlotChecker(opts: SlotCheckerOptions): SlotChecker & { close(): void } {
  const client = createInternalClient({ baseUrl: opts.baseUrl, service: 'availability', timeoutMs: opts.timeoutMs, signer: opts.signer });

  /** One call for `batch` (one lane); one outcome per check, in order. */
  async function send(batch: PendingCheck[]): Promise<Outcome[]> {
    const each = (outcome: () => Outcome) => batch.map(outcome);
    const first = batch[0]!;
    const path = `/internal/v1/workspaces/${encodeURIComponent(first.workspaceId)}/slot-checks`;
    const json = { checks: batch.map((p) => p.item) };
    let res;
    for (let attempt = 1; ; attempt++) {
      try {
        // On behalf of the creates' caller (their API key, or the booking page), in the workspace asked about.
        res = await client.request<{ data?: unknown }>('POST', path, { json, onBehalf: first.who });
        break;
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        // The check has no side effects, so one immediate retry is safe; it covers the keep-alive race
        // where the server closes an idle socket just as we reuse it (ECONNRESET). Timeouts are not retried.
        if (err.kind === 'unreachable' && attempt === 1) continue;
        const kind = err.kind;
        return each(() => failed(kind));
      }
    }
    if (res.status === 200) {
      const parsed = slotChecksResponseSchema.safeParse(res.body?.data);
      if (!parsed.success) return each(() => offContract('unexpected body'));
      if (parsed.data.length !== batch.length) return each(() => offContract('unexpected body', { checks: batch.length, answers: parsed.data.length }));
      return parsed.data.map((entry) =>
        'error' in entry ? { error: new DomainError('calendar_unavailable', { retryAfterSeconds: entry.error.retry_after_seconds }) } : { answer: entry },
      );
    }
    if (res.status === 503) {
      const code = (res.body as { error?: { code?: unknown } } | undefined)?.error?.code;
      const retryAfterSeconds = parseRetryAfterSeconds(res.headers['retry-after']) ?? 1;
      return each(() => ({ error: new DomainError(code === 'service_unavailable' ? 'service_unavailable' : 'calendar_unavailable', { retryAfterSeconds }) }));
    }
    // An Event Type unknown in this workspace may also come back as a plain 404.
    if (res.status === 404) return each(() => ({ answer: { bookable: false, reason: 'not_found' } }));
    const status = res.status;
    return each(() => offContract('unexpected status', { status }));
  }

  const calls = createGroupCommit<PendingCheck, Outcome>({
    run: send,
    laneOf,
    maxInFlight: opts.batchesInFlight,
    maxBatch: opts.batchMax,
  });

  return {
    async check(workspaceId, req): Promise<SlotCheckResponse> {
      const who = onBehalfOf({ workspaceId });
      // Its optional fields set after, not spread in (each property written after a spread costs: createBatchRow).
      const item: SlotCheckItem = { event_type_id: req.eventTypeId, start_at: toTimestamp(req.startAt) };
      if (req.excludeBookingId) item.exclude_booking_id = req.excludeBookingId;
      if (isAcceptableRequestId(who.requestId)) item.request_id = who.requestId;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => resolve(failed('timeout')), opts.timeoutMs);
      });
      let outcome: Outcome;
      try {
        outcome = await Promise.race([calls.submit({ workspaceId, who, item }), deadline]);
      } finally {
        clearTimeout(timer);
      }
      if ('answer' in outcome) return outcome.answer;
      if (outcome.log) opts.logger[outcome.log.level](outcome.log.message, outcome.log.meta);
      throw outcome.error;
    },
    close: () => client.close(),
  };
}
