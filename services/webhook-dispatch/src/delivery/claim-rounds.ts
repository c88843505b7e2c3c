import type { Pool } from 'pg';
import type { Logger } from '@sched/logger';
import { claimDueDeliveries, type ClaimedDelivery } from '../store/delivery-worker.queries';
import type { ClaimTokens } from './claim-tokens';
import type { DeadLetterFlush } from './dead-letter-flush';
import { errorText } from './error-text';
import type { SendSlots } from './send-slots';
import type { WakeSchedule } from './wake-schedule';

export interface ClaimRoundsOptions {
  pool: Pool;
  logger: Logger;
  leaseMs: number;
  slots: SendSlots;
  claims: ClaimTokens;
  deadLetters: DeadLetterFlush;
  schedule: WakeSchedule;
  /** Sends a claimed delivery whose endpoint slot is held. */
  send: (d: ClaimedDelivery, token: string) => void;
}

/**
 * The rounds that take due deliveries on a wake-up (a NOTIFY, the timer, a finished attempt): retries,
 * deliveries left for want of room or for their endpoint's cap, other replicas' expired leases,
 * replays. Rounds never overlap in one process: a wake-up during a round asks for another round after
 * it. A round publishes pending dead letters (when there may be some), claims as many due deliveries
 * as there is room for and starts their attempts without waiting; then the schedule plans the next
 * wake-up beside it. A failing round (the database may be down) is tried again after the poll interval.
 */
export class ClaimRounds {
  private running: Promise<void> | undefined;
  private again = false;
  private failingRounds = 0;
  private stopped = false;

  constructor(private readonly o: ClaimRoundsOptions) {}

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Look for due deliveries now (or right after the round running). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const log = this.o.logger;
    this.running = this.round()
      .then(() => {
        if (this.failingRounds > 0) log.info('delivery worker running again', { failed_rounds: this.failingRounds });
        this.failingRounds = 0;
      })
      .catch((err: unknown) => {
        // Once per outage at error level; the database may be down, every poll would repeat it.
        this.failingRounds += 1;
        if (this.failingRounds === 1) log.error('delivery worker round failed', { error: errorText(err) });
        else log.debug('delivery worker round failed again', { error: errorText(err), failed_rounds: this.failingRounds });
        this.o.schedule.wakeAfterPoll();
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** No new round from now on (one running finishes its claim statement and stops claiming). */
  stop(): void {
    this.stopped = true;
  }

  /** Waits for the round running, if any. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async round(): Promise<void> {
    const { pool, slots, claims, schedule, logger: log } = this.o;
    await this.o.deadLetters.flushIfDue();
    let room = slots.free();
    let claimedAll = 0;
    while (room > 0 && !this.stopped) {
      const token = claims.next();
      const claimed = await claimDueDeliveries(pool, { batch: room, perEndpoint: slots.perEndpoint, leaseMs: this.o.leaseMs, token });
      const over: string[] = [];
      for (const d of claimed) {
        if (slots.hold(d.endpointId)) this.o.send(d, token);
        else over.push(d.id);
      }
      claims.giveBack(token, over);
      claimedAll += claimed.length;
      if (claimed.length < room) break;
      room = slots.free();
    }
    if (room <= 0) schedule.backlogged = true;
    if (log.isDebugEnabled()) log.debug('delivery worker round', { claimed: claimedAll, in_flight: slots.running });
    schedule.plan();
  }
}
