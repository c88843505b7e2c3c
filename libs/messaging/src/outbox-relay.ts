import { getTableConfig } from 'drizzle-orm/pg-core';
import type { Pool, QueryResult } from 'pg';
import { quoteIdent, startNotificationListener } from '@sched/db';
import type { Broker, MessagingLogger } from './broker';
import type { EventEnvelope } from './envelope';
import { describeError } from './message-headers';
import { outboxChannel, outboxSchemaName, type OutboxTable } from './outbox-table';

export interface OutboxRelayOptions {
  /** For the rounds (a connection each) and the LISTEN connection, held for the relay's lifetime. */
  pool: Pool;
  table: OutboxTable;
  /** Defaults to the schema of `table`; names the NOTIFY channel `<schema>_outbox`. */
  schemaName?: string;
  broker: Pick<Broker, 'publish' | 'isConnected'>;
  logger: MessagingLogger;
  /** Safety net when a NOTIFY is missed (LISTEN connection down). Default 1000. */
  pollIntervalMs?: number;
  batchSize?: number;
  /** Longest pause after failed publishes. Default 30000. */
  maxBackoffMs?: number;
  /** Rounds waiting for their publisher confirms at once (each holds a pool connection). Default 3. */
  maxRoundsInFlight?: number;
}

export interface OutboxRelay {
  /** Stops waking up and waits for the rounds in progress. */
  stop(): Promise<void>;
}

const LISTEN_RETRY_MS = 1000;

/** A string as an SQL literal (standard_conforming_strings is on since Postgres 9.1): quotes doubled, NULs dropped. */
function literal(value: string): string {
  return `'${value.replace(/\0/g, '').replace(/'/g, "''")}'`;
}

/**
 * Publishes committed outbox rows. Each round claims the oldest unpublished rows with
 * FOR UPDATE SKIP LOCKED, so replicas running at once split the rows between them
 * instead of publishing the same row twice; a row is marked only after its confirm.
 * A crash between confirm and commit publishes the row again (at-least-once): consumers
 * deduplicate by event id.
 */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { table: t, broker, logger: log } = opts;
  const channel = outboxChannel(opts.schemaName ?? outboxSchemaName(t));
  const batchSize = opts.batchSize ?? 100;
  const maxBackoffMs = opts.maxBackoffMs ?? 30_000;

  const maxRounds = Math.max(1, opts.maxRoundsInFlight ?? 3);
  const cfg = getTableConfig(t);
  const tableName = `${quoteIdent(cfg.schema ?? 'public')}.${quoteIdent(cfg.name)}`;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`outbox relay: batchSize must be a positive integer, got ${batchSize}`);
  const claimSql = `SELECT id, payload FROM ${tableName} WHERE published_at IS NULL ORDER BY created_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;

  let stopped = false;
  /** Rounds started and not finished (each holds its claimed rows in its own transaction). */
  const rounds = new Set<Promise<void>>();
  /** A round is claiming rows and has not yet put them on the channel: the next must wait for that. */
  let claiming = false;
  let again = false;
  let failureStreak = 0;
  let backoffUntil = 0;
  let backoffTimer: NodeJS.Timeout | undefined;

  const pollTimer = setInterval(() => kick(), opts.pollIntervalMs ?? 1000);

  /**
   * Starts a round unless one is still claiming or `maxRounds` are waiting for their confirms. Rounds
   * overlap: the next one starts as soon as the previous one has handed its messages to the channel, so an
   * event committed during a round waits for that round's SELECT, not for its confirms. SKIP LOCKED keeps
   * their rows apart, and since each round publishes only after the previous one has published, the
   * channel (and so the broker) still sees the rows in commit order.
   */
  function kick(): void {
    if (stopped) return;
    if (claiming || rounds.size >= maxRounds) {
      again = true; // a NOTIFY during a round may concern rows its SELECT did not see
      return;
    }
    const wait = backoffUntil - Date.now();
    if (wait > 0) {
      backoffTimer ??= setTimeout(() => {
        backoffTimer = undefined;
        kick();
      }, wait);
      return;
    }
    // Disconnected: leave the rows alone rather than count an attempt against each one.
    if (!broker.isConnected()) return noteFailure('broker not connected');
    again = false;
    claiming = true;
    const round: Promise<void> = runRound()
      .catch((err: unknown) => {
        log.error('outbox relay round failed unexpectedly', { channel, error: describeError(err) });
      })
      .finally(() => {
        rounds.delete(round);
        if (again) kick();
      });
    rounds.add(round);
  }

  function handedOver(): void {
    if (!claiming) return;
    claiming = false;
    if (again) kick();
  }

  function noteFailure(reason: string): void {
    failureStreak += 1;
    const delay = Math.min(maxBackoffMs, 100 * 2 ** Math.min(failureStreak, 12));
    backoffUntil = Date.now() + delay;
    // Once per outage at warn level; the rest would only repeat it.
    if (failureStreak === 1) log.warn('outbox relay cannot publish; backing off', { channel, reason, retry_in_ms: delay });
    else log.debug('outbox relay still backing off', { channel, reason, retry_in_ms: delay, failures: failureStreak });
  }

  async function runRound(): Promise<void> {
    let result: { claimed: number; failed: number; firstError?: string };
    try {
      result = await round();
    } catch (err) {
      return noteFailure(describeError(err));
    } finally {
      handedOver();
    }
    if (result.failed > 0) return noteFailure(result.firstError ?? 'publish failed');
    if (failureStreak > 0) log.info('outbox relay publishing again', { channel });
    failureStreak = 0;
    backoffUntil = 0;
    if (result.claimed === batchSize) again = true; // a full batch: more may be waiting
  }

  /**
   * One round in two round trips on a pooled connection: `BEGIN; SELECT … FOR UPDATE SKIP LOCKED`, then,
   * after the confirms, the marks and `COMMIT` together. Both go as simple-protocol text (several statements
   * in one message); the only values in them are the batch size and row ids read from the table itself,
   * written as quoted literals.
   */
  async function round(): Promise<{ claimed: number; failed: number; firstError?: string }> {
    const client = await opts.pool.connect();
    let open = false;
    try {
      open = true;
      const [, claimed] = (await client.query(`BEGIN; ${claimSql}`)) as unknown as [unknown, QueryResult<{ id: string; payload: EventEnvelope }>];
      const rows = claimed.rows;
      if (rows.length === 0) {
        await client.query('COMMIT');
        open = false;
        return { claimed: 0, failed: 0 };
      }

      // Published together on one channel: the broker keeps their order and confirms in bulk. Each
      // publish is on the channel when broker.publish returns its promise, so the next round may start.
      const pending = rows.map((r) => broker.publish(r.payload));
      handedOver();
      const results = await Promise.allSettled(pending);
      const published: string[] = [];
      const failed: Array<{ id: string; error: string }> = [];
      results.forEach((res, i) => {
        const id = rows[i]!.id;
        if (res.status === 'fulfilled') published.push(id);
        else failed.push({ id, error: describeError(res.reason) });
      });
      const statements: string[] = [];
      if (published.length > 0) statements.push(`UPDATE ${tableName} SET published_at = now() WHERE id IN (${published.map(literal).join(', ')})`);
      for (const f of failed) {
        statements.push(`UPDATE ${tableName} SET attempts = attempts + 1, last_error = ${literal(f.error)} WHERE id = ${literal(f.id)}`);
        log.warn('outbox event not published', { event_id: f.id, error: f.error });
      }
      statements.push('COMMIT');
      await client.query(statements.join('; '));
      open = false;
      log.debug('outbox round', { channel, published: published.length, failed: failed.length });
      return { claimed: rows.length, failed: failed.length, firstError: failed[0]?.error };
    } catch (err) {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  const listener = startNotificationListener({
    pool: opts.pool,
    channel,
    onNotification: () => kick(),
    onListening: () => kick(), // rows committed while nobody was listening
    logger: log,
    retryMs: LISTEN_RETRY_MS,
    label: 'outbox relay',
    meanwhile: 'polling meanwhile',
  });
  kick();

  return {
    async stop() {
      stopped = true;
      clearInterval(pollTimer);
      if (backoffTimer) clearTimeout(backoffTimer);
      await listener.stop();
      while (rounds.size > 0) await Promise.allSettled([...rounds]);
    },
  };
}
