import { DomainError, parseRetryAfterSeconds, slotCheckResponseSchema, toTimestamp, type SlotCheckResponse } from '@sched/contracts';
import { createInternalClient, onBehalfOf, UpstreamError, type CredentialSigner } from '@sched/http';
import type { Logger } from '@sched/logger';
import type { SlotChecker } from '../domain/ports';

/**
 * The availability service's slot check, failing closed: without a trustworthy "yes" nothing is booked.
 * - 503 from availability (calendar provider down, no fresh snapshot): `503 calendar_unavailable` with its Retry-After;
 *   availability's own store down (`503 service_unavailable`, decisions.md §2) is passed on as that, with its Retry-After.
 * - availability unreachable, too slow, or answering something off-contract: `502` / `504 upstream_unavailable`
 *   (Retry-After: 1). That is the contract's code for "a service could not be reached in time"; it is not
 *   calendar_unavailable, because the calendar may be fine. Both are 5xx, so no idempotency key is used up.
 */
export function createSlotChecker(opts: { baseUrl: string; timeoutMs: number; logger: Logger; signer: CredentialSigner }): SlotChecker & { close(): void } {
  const client = createInternalClient({ baseUrl: opts.baseUrl, service: 'availability', timeoutMs: opts.timeoutMs, signer: opts.signer });
  const offContract = (why: string, meta: Record<string, unknown> = {}) => {
    opts.logger.error('availability slot check answered off-contract', { why, ...meta });
    return new DomainError('upstream_unavailable', { status: 502, retryAfterSeconds: 1 });
  };

  return {
    async check(workspaceId, req): Promise<SlotCheckResponse> {
      const path = `/internal/v1/workspaces/${encodeURIComponent(workspaceId)}/slot-check`;
      const json = {
        event_type_id: req.eventTypeId,
        start_at: toTimestamp(req.startAt),
        ...(req.excludeBookingId ? { exclude_booking_id: req.excludeBookingId } : {}),
      };
      let res;
      for (let attempt = 1; ; attempt++) {
        try {
          // On behalf of the create's caller (its API key, or the booking page), in the workspace asked about.
          res = await client.request<{ data?: unknown }>('POST', path, { json, onBehalf: onBehalfOf({ workspaceId }) });
          break;
        } catch (err) {
          if (!(err instanceof UpstreamError)) throw err;
          // The check has no side effects, so one immediate retry is safe; it covers the keep-alive race
          // where the server closes an idle socket just as we reuse it (ECONNRESET). Timeouts are not retried.
          if (err.kind === 'unreachable' && attempt === 1) continue;
          opts.logger.warn('availability slot check failed; failing closed', { kind: err.kind });
          throw new DomainError('upstream_unavailable', { status: err.kind === 'timeout' ? 504 : 502, retryAfterSeconds: 1 });
        }
      }
      if (res.status === 200) {
        const parsed = slotCheckResponseSchema.safeParse(res.body?.data);
        if (!parsed.success) throw offContract('unexpected body');
        return parsed.data;
      }
      if (res.status === 503) {
        const code = (res.body as { error?: { code?: unknown } } | undefined)?.error?.code;
        throw new DomainError(code === 'service_unavailable' ? 'service_unavailable' : 'calendar_unavailable', { retryAfterSeconds: parseRetryAfterSeconds(res.headers['retry-after']) ?? 1 });
      }
      // An Event Type unknown in this workspace may also come back as a plain 404.
      if (res.status === 404) return { bookable: false, reason: 'not_found' };
      throw offContract('unexpected status', { status: res.status });
    },
    close: () => client.close(),
  };
}
