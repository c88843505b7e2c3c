import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { Logger } from '@sched/logger';
import { releaseClaimed } from '../store/delivery-worker.queries';
import { errorText } from './error-text';

/**
 * This replica's claims: a fresh token for every claim statement (written on the rows it leases), and
 * the way back to the queue for claimed rows this replica may not use.
 */
export class ClaimTokens {
  private readonly replica = randomBytes(6).toString('hex');
  private claims = 0;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {}

  next(): string {
    return `${this.replica}:${++this.claims}`;
  }

  /** Claims this replica took but may not use go back to the queue; if this fails, their lease expires instead. */
  giveBack(token: string, ids: string[]): void {
    if (ids.length === 0) return;
    releaseClaimed(this.pool, token, ids).catch((err: unknown) => {
      this.log.warn('could not give back claimed deliveries; they wait for their lease to expire', { deliveries: ids.length, error: errorText(err) });
    });
  }
}
