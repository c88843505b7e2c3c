import type { Pool } from 'pg';
import { nextDueAt } from '../store/delivery-worker.queries';

export interface WakeScheduleOptions {
  pool: Pool;
  /** The longest the worker sleeps: a safety net for a missed NOTIFY, and the retry pace while failing. */
  pollIntervalMs: number;
  /** Every send slot is running an attempt. */
  full: () => boolean;
  /** The timer fired. */
  onTimer: () => void;
  /** Asks for a claim round now. */
  kick: () => void;
}

/**
 * When the worker looks again. One timer, at the earliest time anyone asked for (a retry's backoff,
 * the next due delivery, the poll), and the plan that sets it from the database's earliest due time.
 * It also keeps `backlogged`: due deliveries were left unclaimed (no room, an endpoint at its cap, or
 * leased by another replica), so a finished attempt may let them go.
 */
export class WakeSchedule {
  /** Due deliveries were left unclaimed (no room, or an endpoint at its cap): a finished attempt may let them go. */
  backlogged = false;
  private timer: { handle: NodeJS.Timeout; at: number } | undefined;
  private planning: Promise<void> | undefined;
  private replan = false;
  private completedWhilePlanning = false;
  private stopped = false;

  constructor(private readonly o: WakeScheduleOptions) {}

  /** Keeps one timer, at the earliest time anyone asked for. */
  wakeAt(at: number): void {
    if (this.stopped || (this.timer && this.timer.at <= at)) return;
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = {
      at,
      handle: setTimeout(
        () => {
          this.timer = undefined;
          this.o.onTimer();
        },
        Math.max(0, at - Date.now()),
      ),
    };
  }

  /** Wakes after one poll interval at the latest. */
  wakeAfterPoll(): void {
    this.wakeAt(Date.now() + this.o.pollIntervalMs);
  }

  get isPlanning(): boolean {
    return this.planning !== undefined;
  }

  /** An attempt ended while the plan was being decided: the room it freed is taken into account then. */
  attemptEndedWhilePlanning(): void {
    this.completedWhilePlanning = true;
  }

  /**
   * Sets the timer from the database's earliest due time. Runs beside the rounds rather than inside
   * them, so a NOTIFY never waits for this query before claiming; overlapping requests coalesce.
   */
  plan(): void {
    if (this.stopped) return;
    if (this.planning) {
      this.replan = true;
      return;
    }
    const poll = this.o.pollIntervalMs;
    this.planning = nextDueAt(this.o.pool)
      .then((due) => {
        const wait = due ? due.getTime() - Date.now() : Infinity;
        // Due now yet not claimed: no room, an endpoint at its cap, or leased by another replica. A
        // finished attempt here, or the poll, brings us back.
        this.backlogged = wait <= 0 || this.o.full();
        this.wakeAt(Date.now() + (wait > 0 ? Math.min(wait, poll) : poll));
        // Room freed while this was being decided would otherwise wait for the poll.
        if (this.backlogged && this.completedWhilePlanning) this.o.kick();
      })
      .catch(() => this.wakeAfterPoll())
      .finally(() => {
        this.planning = undefined;
        this.completedWhilePlanning = false;
        if (this.replan) {
          this.replan = false;
          this.plan();
        }
      });
  }

  /** No timer and no plan from now on. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = undefined;
  }

  /** Waits for a plan being decided. */
  async idle(): Promise<void> {
    await this.planning;
  }
}
