import type { Db } from '@sched/db';
import { runWithContext, type Logger } from '@sched/logger';
import type { DeliveryDeadLetterPublisher } from '../events/dead-letter.publisher';
import { deadLettersToPublish, markDeadLetterPublished } from '../store/delivery-worker.queries';
import type { DispatchMetrics } from './dispatch.metrics';
import { errorText } from './error-text';

const DEAD_LETTER_BATCH = 20;
const DEAD_LETTER_BACKOFF_MS = 5000;

/**
 * Publishes the DLQ messages of failed deliveries. At-least-once: a row stays pending until the broker
 * confirms; the message id is stable, so a repeat is absorbed. While the broker refuses, it pauses
 * (the rounds come back at least every poll interval, so the pause ends on its own).
 */
export class DeadLetterFlush {
  /** Failed deliveries may await their DLQ message; checked at start, after failures, and on every timer. */
  private due = true;
  private pauseUntil = 0;
  private failing = false;

  constructor(
    private readonly o: {
      db: Db;
      publisher: DeliveryDeadLetterPublisher;
      metrics: DispatchMetrics;
      logger: Logger;
    },
  ) {}

  get isDue(): boolean {
    return this.due;
  }

  /** A delivery may have failed for good (or the timer fired): look at the next round. */
  markDue(): void {
    this.due = true;
  }

  async flushIfDue(): Promise<void> {
    if (this.due) await this.flush();
  }

  private async flush(): Promise<void> {
    const { db, publisher, metrics, logger: log } = this.o;
    if (Date.now() < this.pauseUntil) return;
    const due = await deadLettersToPublish(db, DEAD_LETTER_BATCH);
    // More than one batch waiting: look again next round.
    this.due = due.length === DEAD_LETTER_BATCH;
    for (const d of due) {
      try {
        await publisher.publish(d);
      } catch (err) {
        this.pauseUntil = Date.now() + DEAD_LETTER_BACKOFF_MS;
        this.due = true;
        if (!this.failing) log.warn('cannot dead-letter failed deliveries yet; will retry', { error: errorText(err) });
        this.failing = true;
        return;
      }
      this.failing = false;
      await markDeadLetterPublished(db, d);
      metrics.deadLettered();
      runWithContext({ event_id: d.eventId, workspace_id: d.workspaceId }, () =>
        log.warn('webhook delivery dead-lettered', { delivery_id: d.id, endpoint_id: d.endpointId, generation: d.generation, attempts: d.attemptCount }),
      );
    }
  }
}
