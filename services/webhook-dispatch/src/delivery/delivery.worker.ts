import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { Db } from '@sched/db';
import { runWithContext, type Logger } from '@sched/logger';
import type { SecretBox } from '@sched/secrets';
import { decideAfterAttempt, describeAttempt, type RetryPolicy } from '../domain/delivery-policy';
import { activeSecrets, webhookHeaders } from '../domain/webhook-signing';
import type { DeliveryDeadLetterPublisher } from '../events/dead-letter.publisher';
import { DELIVERIES_CHANNEL } from '../store/delivery.queries';
import {
  claimDueDeliveries,
  deadLettersToPublish,
  markDeadLetterPublished,
  nextDueAt,
  recordAttempt,
  releaseClaimed,
  type ClaimedDelivery,
} from '../store/delivery-worker.queries';
import type { DispatchMetrics } from './dispatch.metrics';
import { startWakeListener } from './wake-listener';
import type { WebhookSender } from './webhook.sender';

export interface DeliveryWorkerOptions {
  db: Db;
  /** For the LISTEN connection. */
  pool: Pool;
  sender: WebhookSender;
  secrets: SecretBox;
  deadLetters: DeliveryDeadLetterPublisher;
  metrics: DispatchMetrics;
  logger: Logger;
  policy: RetryPolicy;
  perEndpointConcurrency: number;
  maxInFlight: number;
  leaseMs: number;
  pollIntervalMs: number;
  random?: () => number;
}

/**
 * Claims taken while an event is consumed: the ingest statement leases the new deliveries to this
 * replica, up to its free room, and they are sent as soon as it has committed, with no NOTIFY and no
 * claim query in between.
 */
export interface IngestClaims {
  /** Reserves up to `maxRows` send slots for one ingest statement (none while stopping). */
  open(maxRows: number): IngestTicket;
}

export interface IngestTicket {
  /** The claim token to write on the rows claimed; '' when room is 0. */
  readonly token: string;
  /** Rows the statement may claim. */
  readonly room: number;
  readonly perEndpoint: number;
  readonly leaseMs: number;
  /**
   * The rows the statement claimed. Those over this replica's own per-endpoint count (a statement
   * does not see the claims of others running at the same time) are given back once committed
   * instead of being sent; unused room is freed at once.
   */
  take(claimed: readonly ClaimedDelivery[]): void;
  /** The statement (or its transaction) ended: committed, send what was kept; otherwise forget it (nothing was written, or the lease settles it). */
  settle(committed: boolean): void;
}

export interface DeliveryWorker {
  /** Look for due deliveries now (the LISTEN connection calls it on every NOTIFY). */
  kick(): void;
  /** For the event consumer: claim at insert. */
  ingest: IngestClaims;
  /** Stops claiming, waits for attempts in flight (each bounded by the send timeout). */
  stop(): Promise<void>;
}

const DEAD_LETTER_BATCH = 20;
/**
 * How long stop() waits for ingest statements holding claims to end (they take milliseconds; this
 * bounds a stuck one). Claims of one that commits later are not sent here: their lease expires and
 * another replica sends them.
 */
const OPEN_TICKETS_WAIT_MS = 10_000;

/** The driver's own message (drizzle wraps it in "Failed query: <the SQL>", which says little). */
function errorText(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
const DEAD_LETTER_BACKOFF_MS = 5000;

/**
 * The loop that sends deliveries. New deliveries mostly arrive already claimed by the consumer's
 * ingest statement (`ingest`) and start at once; the rounds are for the rest: retries, deliveries
 * left for want of room or for their endpoint's cap, other replicas' expired leases, replays.
 * Rounds never overlap in one process: a wake-up during a round asks for another round after it.
 * A round publishes pending dead letters (when there may be some), claims as many due deliveries as
 * there is room for and starts their attempts without waiting; beside it, the next wake-up is
 * planned from the earliest due time. A finished attempt wakes the loop when its record says its
 * endpoint has due deliveries waiting or deliveries were left waiting for room, and moves the timer
 * forward when it schedules a retry sooner. Per endpoint, this replica never holds more than the
 * cap at once (`held`); across replicas the cap is approximate.
 */
export function startDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { db, pool, logger: log } = opts;
  const random = opts.random ?? Math.random;
  const replica = randomBytes(6).toString('hex');
  const inFlight = new Set<Promise<void>>();
  /** Send slots promised to ingest statements whose claimed rows have not started yet. */
  let reserved = 0;
  /** Per endpoint: attempts in flight here plus claims taken here and not started yet (this replica's exact share of the cap). */
  const held = new Map<string, number>();
  /** Ingest tickets whose statement has not ended; stop() waits for them. */
  const openTickets = new Set<Promise<void>>();
  let claims = 0;
  let stopped = false;
  /** stop() is past waiting for ingest claims: nothing may start any more. */
  let finished = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: { handle: NodeJS.Timeout; at: number } | undefined;
  /** Due deliveries were left unclaimed (no room, or an endpoint at its cap): a finished attempt may let them go. */
  let backlogged = false;
  /** Failed deliveries may await their DLQ message; checked at start, after failures, and on every timer. */
  let deadLettersDue = true;
  let deadLetterPauseUntil = 0;
  let deadLetterFailing = false;
  let failingRounds = 0;
  let planning: Promise<void> | undefined;
  let replan = false;
  let completedWhilePlanning = false;

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = round()
      .then(() => {
        if (failingRounds > 0) log.info('delivery worker running again', { failed_rounds: failingRounds });
        failingRounds = 0;
      })
      .catch((err: unknown) => {
        // Once per outage at error level; the database may be down, every poll would repeat it.
        failingRounds += 1;
        if (failingRounds === 1) log.error('delivery worker round failed', { error: errorText(err) });
        else log.debug('delivery worker round failed again', { error: errorText(err), failed_rounds: failingRounds });
        wakeAt(Date.now() + opts.pollIntervalMs);
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  }

  /** Keeps one timer, at the earliest time anyone asked for. */
  function wakeAt(at: number): void {
    if (stopped || (timer && timer.at <= at)) return;
    if (timer) clearTimeout(timer.handle);
    timer = {
      at,
      handle: setTimeout(() => {
        timer = undefined;
        deadLettersDue = true;
        kick();
      }, Math.max(0, at - Date.now())),
    };
  }

  const freeRoom = () => opts.maxInFlight - inFlight.size - reserved;

  function hold(endpointId: string): boolean {
    const n = held.get(endpointId) ?? 0;
    if (n >= opts.perEndpointConcurrency) return false;
    held.set(endpointId, n + 1);
    return true;
  }

  function unhold(endpointId: string): void {
    const n = (held.get(endpointId) ?? 0) - 1;
    if (n > 0) held.set(endpointId, n);
    else held.delete(endpointId);
  }

  /** Claims this replica took but may not use go back to the queue; if this fails, their lease expires instead. */
  function giveBack(token: string, ids: string[]): void {
    if (ids.length === 0) return;
    releaseClaimed(pool, token, ids).catch((err: unknown) => {
      log.warn('could not give back claimed deliveries; they wait for their lease to expire', { deliveries: ids.length, error: errorText(err) });
    });
  }

  async function round(): Promise<void> {
    if (deadLettersDue) await publishDeadLetters();
    let room = freeRoom();
    let claimedAll = 0;
    while (room > 0 && !stopped) {
      const token = `${replica}:${++claims}`;
      const claimed = await claimDueDeliveries(pool, { batch: room, perEndpoint: opts.perEndpointConcurrency, leaseMs: opts.leaseMs, token });
      const over: string[] = [];
      for (const d of claimed) {
        if (hold(d.endpointId)) start(d, token);
        else over.push(d.id);
      }
      giveBack(token, over);
      claimedAll += claimed.length;
      if (claimed.length < room) break;
      room = freeRoom();
    }
    if (room <= 0) backlogged = true;
    if (log.isDebugEnabled()) log.debug('delivery worker round', { claimed: claimedAll, in_flight: inFlight.size });
    planNextWake();
  }

  function openTicket(maxRows: number): IngestTicket {
    const room = stopped ? 0 : Math.max(0, Math.min(maxRows, freeRoom()));
    reserved += room;
    const token = room > 0 ? `${replica}:${++claims}` : '';
    let kept: ClaimedDelivery[] = [];
    let over: string[] = [];
    let taken = false;
    let settled = false;
    let ended = (): void => undefined;
    // Only a ticket with room can start sends after stop() began (none is opened with room then).
    const done = room > 0 ? new Promise<void>((resolve) => (ended = resolve)) : undefined;
    if (done) openTickets.add(done);
    return {
      token,
      room,
      perEndpoint: opts.perEndpointConcurrency,
      leaseMs: opts.leaseMs,
      take(claimed) {
        if (taken || settled) throw new Error('ingest ticket already used');
        taken = true;
        for (const d of claimed) {
          if (kept.length < room && hold(d.endpointId)) kept.push(d);
          else over.push(d.id);
        }
        reserved -= room - kept.length;
        // The slots not needed are free now; a round may be waiting for them.
        if (room > kept.length && backlogged && !running) kick();
      },
      settle(committed) {
        if (settled) return;
        settled = true;
        // Before take() (the statement failed) the whole reservation is still out; after it, the kept part.
        reserved -= taken ? kept.length : room;
        if (committed && !finished) {
          for (const d of kept) start(d, token);
          giveBack(token, over);
        } else {
          for (const d of kept) unhold(d.endpointId);
        }
        kept = [];
        over = [];
        if (done) openTickets.delete(done);
        ended();
      },
    };
  }

  /**
   * Sets the timer from the database's earliest due time. Runs beside the rounds rather than inside
   * them, so a NOTIFY never waits for this query before claiming; overlapping requests coalesce.
   */
  function planNextWake(): void {
    if (stopped) return;
    if (planning) {
      replan = true;
      return;
    }
    planning = nextDueAt(pool)
      .then((due) => {
        const wait = due ? due.getTime() - Date.now() : Infinity;
        // Due now yet not claimed: no room, an endpoint at its cap, or leased by another replica. A
        // finished attempt here, or the poll, brings us back.
        backlogged = wait <= 0 || opts.maxInFlight - inFlight.size <= 0;
        wakeAt(Date.now() + (wait > 0 ? Math.min(wait, opts.pollIntervalMs) : opts.pollIntervalMs));
        // Room freed while this was being decided would otherwise wait for the poll.
        if (backlogged && completedWhilePlanning) kick();
      })
      .catch(() => wakeAt(Date.now() + opts.pollIntervalMs))
      .finally(() => {
        planning = undefined;
        completedWhilePlanning = false;
        if (replan) {
          replan = false;
          planNextWake();
        }
      });
  }

  /** Sends a delivery this replica holds (counted in `held` for its endpoint). */
  function start(d: ClaimedDelivery, token: string): void {
    let more = false;
    const work: Promise<void> = runWithContext({ event_id: d.eventId, workspace_id: d.workspaceId }, () => attempt(d, token))
      .then((endpointHasMore) => {
        more = endpointHasMore;
      })
      .catch((err: unknown) => {
        // Not recorded: the lease expires and the delivery is tried again then.
        log.error('webhook attempt could not be completed', { delivery_id: d.id, error: errorText(err) });
      })
      .finally(() => {
        inFlight.delete(work);
        unhold(d.endpointId);
        // The room this frees matters only to deliveries left waiting for it: the endpoint's own,
        // which the record statement reported (`more`), or any left for want of room. During a
        // round we cannot know yet (it decides `backlogged` at its end), so ask for one more round.
        if (more) kick();
        else if (running) again = true;
        else if (planning) completedWhilePlanning = true;
        else if (backlogged || deadLettersDue) kick();
      });
    inFlight.add(work);
  }

  /** One attempt and its record; true when the endpoint has due deliveries waiting for a slot. */
  async function attempt(d: ClaimedDelivery, token: string): Promise<boolean> {
    const attemptedAt = new Date();
    const secrets = activeSecrets(
      {
        current: opts.secrets.open(d.secretSealed, d.endpointId),
        previous: d.previousSecretSealed ? opts.secrets.open(d.previousSecretSealed, d.endpointId) : null,
        previousExpiresAt: d.previousSecretExpiresAt,
      },
      attemptedAt,
    );
    const headers = webhookHeaders(secrets, d.eventId, d.body, attemptedAt);
    const { result, latencyMs } = await opts.sender.send(d.url, headers, d.body);
    const described = describeAttempt(result);
    const roundAttempts = d.roundAttempts + 1;
    const decision = decideAfterAttempt(result, roundAttempts, opts.policy, new Date(), random);
    const { moved, more } = await recordAttempt(pool, db, d, token, { attemptedAt, latencyMs, ...described }, decision);
    opts.metrics.attempt(described.errorKind ?? 'success', latencyMs);

    const fields = {
      delivery_id: d.id,
      endpoint_id: d.endpointId,
      event_type: d.eventType,
      attempt: d.attemptCount + 1,
      status_code: described.statusCode,
      latency_ms: latencyMs,
      error_kind: described.errorKind,
    };
    if (!moved) {
      log.info('webhook attempt recorded; the delivery had changed meanwhile', fields);
      return more;
    }
    switch (decision.kind) {
      case 'succeeded':
        opts.metrics.finished('succeeded', Date.now() - d.createdAt.getTime());
        log.info('webhook delivered', fields);
        break;
      case 'retry':
        wakeAt(Date.now() + decision.delayMs);
        log.info('webhook attempt failed; will retry', { ...fields, error: described.error, retry_in_ms: decision.delayMs });
        break;
      case 'failed':
        deadLettersDue = true;
        opts.metrics.finished('failed', null);
        log.warn('webhook delivery failed after its last attempt; dead-lettering', { ...fields, error: described.error });
        break;
      case 'gone':
        opts.metrics.finished('gone', null);
        log.warn('receiver answered 410 Gone; endpoint disabled and its pending deliveries stopped', fields);
        break;
    }
    return more;
  }

  /** At-least-once: a row stays pending until the broker confirms; the message id is stable, so a repeat is absorbed. */
  async function publishDeadLetters(): Promise<void> {
    if (Date.now() < deadLetterPauseUntil) return;
    const due = await deadLettersToPublish(db, DEAD_LETTER_BATCH);
    // More than one batch waiting: look again next round.
    deadLettersDue = due.length === DEAD_LETTER_BATCH;
    for (const d of due) {
      try {
        await opts.deadLetters.publish(d);
      } catch (err) {
        deadLetterPauseUntil = Date.now() + DEAD_LETTER_BACKOFF_MS;
        deadLettersDue = true;
        if (!deadLetterFailing) log.warn('cannot dead-letter failed deliveries yet; will retry', { error: errorText(err) });
        deadLetterFailing = true;
        // Rounds wake at least every poll interval, so the pause ends on its own.
        return;
      }
      deadLetterFailing = false;
      await markDeadLetterPublished(db, d);
      opts.metrics.deadLettered();
      runWithContext({ event_id: d.eventId, workspace_id: d.workspaceId }, () =>
        log.warn('webhook delivery dead-lettered', { delivery_id: d.id, endpoint_id: d.endpointId, generation: d.generation, attempts: d.attemptCount }),
      );
    }
  }

  const listener = startWakeListener({ pool: opts.pool, channel: DELIVERIES_CHANNEL, wake: kick, logger: log });
  kick();

  return {
    kick,
    ingest: { open: openTicket },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer.handle);
      timer = undefined;
      await listener.stop();
      await running;
      await planning;
      // Claims taken by ingest statements still running start (or are dropped) when those end.
      const giveUp = Date.now() + OPEN_TICKETS_WAIT_MS;
      while (openTickets.size > 0 && Date.now() < giveUp) {
        let timeout: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...openTickets]),
          new Promise((r) => (timeout = setTimeout(r, Math.max(0, giveUp - Date.now())))),
        ]);
        clearTimeout(timeout);
      }
      finished = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
