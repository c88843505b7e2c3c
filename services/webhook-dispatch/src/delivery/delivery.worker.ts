import type { Pool } from 'pg';
import type { Db } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { SecretBox } from '@sched/secrets';
import type { RetryPolicy } from '../domain/delivery-policy';
import type { DeliveryDeadLetterPublisher } from '../events/dead-letter.publisher';
import { DELIVERIES_CHANNEL } from '../store/delivery.queries';
import { attemptRecords, type AttemptRecords } from '../store/attempt-records.queries';
import type { ClaimedDelivery } from '../store/delivery-worker.queries';
import { ClaimRounds } from './claim-rounds';
import { ClaimTokens } from './claim-tokens';
import { DeadLetterFlush } from './dead-letter-flush';
import { deliveryAttempt } from './delivery-attempt';
import type { DispatchMetrics } from './dispatch.metrics';
import { IngestTickets, type IngestClaims } from './ingest-tickets';
import { SendSlots } from './send-slots';
import { startWakeListener } from './wake-listener';
import { WakeSchedule } from './wake-schedule';
import type { WebhookSender } from './webhook.sender';

export type { IngestClaims, IngestTicket } from './ingest-tickets';

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

export interface DeliveryWorker {
  /** Look for due deliveries now (the LISTEN connection calls it on every NOTIFY). */
  kick(): void;
  /** For the event consumer: claim at insert. */
  ingest: IngestClaims;
  /** The attempt records' group commit (tests read its counters). */
  records: AttemptRecords;
  /** Stops claiming, waits for attempts in flight (each bounded by the send timeout). */
  stop(): Promise<void>;
}

/**
 * How long stop() waits for ingest statements holding claims to end (they take milliseconds; this
 * bounds a stuck one). Claims of one that commits later are not sent here: their lease expires and
 * another replica sends them.
 */
const OPEN_TICKETS_WAIT_MS = 10_000;

/**
 * The loop that sends deliveries, composed of its parts:
 * - `SendSlots`: this replica's room (`WEBHOOK_MAX_IN_FLIGHT`) and its exact per-endpoint share of the cap;
 * - `IngestTickets`: deliveries claimed by the consumer's ingest statement, sent as soon as it commits
 *   (most new deliveries arrive this way);
 * - `ClaimRounds`: the rest, taken on a wake-up (NOTIFY, timer, a finished attempt): retries, deliveries
 *   left for want of room or for their endpoint's cap, other replicas' expired leases, replays;
 * - `WakeSchedule`: when to look again (a retry's backoff, the earliest due time, the poll);
 * - `DeadLetterFlush`: the DLQ messages of deliveries that failed for good;
 * - `deliveryAttempt`: one attempt and its record.
 */
export function startDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { db, pool, logger } = opts;
  const slots = new SendSlots({ maxInFlight: opts.maxInFlight, perEndpoint: opts.perEndpointConcurrency });
  const claims = new ClaimTokens(pool, logger);
  const deadLetters = new DeadLetterFlush({ db, publisher: opts.deadLetters, metrics: opts.metrics, logger });
  const schedule = new WakeSchedule({
    pool,
    pollIntervalMs: opts.pollIntervalMs,
    full: () => slots.full(),
    // Every timer also looks for dead letters to publish (the broker may be back).
    onTimer: () => {
      deadLetters.markDue();
      rounds.kick();
    },
    kick: () => rounds.kick(),
  });
  const records = attemptRecords({ pool, db });
  const attempt = deliveryAttempt({
    records,
    sender: opts.sender,
    secrets: opts.secrets,
    metrics: opts.metrics,
    logger,
    policy: opts.policy,
    random: opts.random ?? Math.random,
    onRetry: (at) => schedule.wakeAt(at),
    onFailed: () => deadLetters.markDue(),
  });
  const rounds = new ClaimRounds({ pool, logger, leaseMs: opts.leaseMs, slots, claims, deadLetters, schedule, send });
  const tickets = new IngestTickets({
    slots,
    claims,
    leaseMs: opts.leaseMs,
    send,
    roomReturned: () => {
      if (schedule.backlogged && !rounds.isRunning) rounds.kick();
    },
  });

  /** Sends a delivery this replica holds (its endpoint's slot is taken). */
  function send(d: ClaimedDelivery, token: string): void {
    slots.run(d.endpointId, attempt(d, token), attemptEnded);
  }

  /**
   * The room a finished attempt frees matters only to deliveries left waiting for it: its endpoint's
   * own, which the record statement reported, or any left for want of room. During a round we cannot
   * know yet (it decides `backlogged` at its end), so ask for one more round after it.
   */
  function attemptEnded(endpointHasMore: boolean): void {
    if (endpointHasMore || rounds.isRunning) rounds.kick();
    else if (schedule.isPlanning) schedule.attemptEndedWhilePlanning();
    else if (schedule.backlogged || deadLetters.isDue) rounds.kick();
  }

  const listener = startWakeListener({ pool, channel: DELIVERIES_CHANNEL, wake: () => rounds.kick(), logger });
  rounds.kick();

  return {
    kick: () => rounds.kick(),
    ingest: { open: (maxRows) => tickets.open(maxRows) },
    records,
    async stop() {
      rounds.stop();
      schedule.stop();
      tickets.stop();
      await listener.stop();
      await rounds.idle();
      await schedule.idle();
      // Claims taken by ingest statements still running start (or are dropped) when those end.
      await tickets.drain(OPEN_TICKETS_WAIT_MS);
      await slots.drain();
    },
  };
}
