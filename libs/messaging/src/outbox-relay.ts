import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { pgErrorCode, startNotificationListener } from '@sched/db';
import type { Broker, MessagingLogger } from './broker';
import { qualifiedTableName } from './db-types';
import type { EventEnvelope } from './envelope';
import { describeError } from './message-headers';
import { outboxChannel, outboxRoutingKeyRule, outboxSchemaName, parseOutboxNotifyPayload, type OutboxTable, type RoutingKeyRule } from './outbox-table';
import { isRoutingKeyOf } from './topology';

export interface OutboxRelayOptions {
  /** For the rounds (a connection each) and the LISTEN connection, held for the relay's lifetime. */
  pool: Pool;
  table: OutboxTable;
  /** Defaults to the schema of `table`; names the NOTIFY channel `<schema>_outbox`. */
  schemaName?: string;
  broker: Pick<Broker, 'publish' | 'isConnected'>;
  logger: MessagingLogger;
  /** Safety net when a NOTIFY is missed (LISTEN connection down): a round over every unpublished row. Default 1000. */
  pollIntervalMs?: number;
  /** Rows per round at most. Default 100. */
  batchSize?: number;
  /** Longest pause after failed publishes. Default 30000. */
  maxBackoffMs?: number;
  /** Rounds waiting for their publisher confirms at once (each holds a pool connection). Default 3. */
  maxRoundsInFlight?: number;
  /** The routing key of each event; default: the rule `table` was declared with (outboxTable), else the type. */
  routingKey?: RoutingKeyRule;
}

export interface OutboxRelay {
  /** Stops waking up and waits for the rounds in progress. */
  stop(): Promise<void>;
}

const LISTEN_RETRY_MS = 1000;
/** Ids named by notifications and not yet claimed, kept at most this many batches; beyond, a scan finds them. */
const MAX_PENDING_BATCHES = 10;
/** SQLSTATE of a missing prepared statement (26000) or one prepared twice (42P05): that connection is dropped. */
const PREPARED_STATE_LOST = new Set(['26000', '42P05']);

/** A string as an SQL literal (standard_conforming_strings is on since Postgres 9.1): quotes doubled, NULs dropped. */
function literal(value: string): string {
  return `'${value.replace(/\0/g, '').replace(/'/g, "''")}'`;
}

function textArray(values: readonly string[]): string {
  return `ARRAY[${values.map(literal).join(', ')}]::text[]`;
}

/**
 * The SQL-level prepared statements (PREPARE) made on each pooled connection, by name. Names are derived
 * from the statement text, so every relay of the process (several in tests, on one pool) shares them.
 */
const preparedOn = new WeakMap<PoolClient, Set<string>>();

interface Prepared {
  name: string;
  /** `PREPARE name(...) AS ...`, sent once per connection in front of the first use. */
  prepare: string;
}

function prepared(params: string, text: string): Prepared {
  const name = `sched_outbox_${createHash('sha1').update(`${params}|${text}`).digest('hex').slice(0, 16)}`;
  return { name, prepare: `PREPARE ${name}${params} AS ${text}` };
}

/**
 * Publishes committed outbox rows. The NOTIFY that wakes the relay names the rows it announces
 * (outboxNotifyPayload), and a round claims exactly those by primary key with FOR UPDATE SKIP LOCKED,
 * so replicas running at once split the rows between them instead of publishing the same row twice. A
 * NOTIFY without ids, the poll timer (the safety net for missed notifications), a (re)connected LISTEN
 * and a failed round instead run the claim over every unpublished row, oldest first. A row is marked
 * only after its confirm. A crash between confirm and commit publishes the row again (at-least-once):
 * consumers deduplicate by event id.
 *
 * Each round is two round trips, `BEGIN; EXECUTE claim(...)` and, after the confirms,
 * `EXECUTE mark(...); COMMIT`, on statements prepared once per pooled connection (SQL PREPARE): no
 * planning per round, and no more round trips than unprepared text. The marking commit is asynchronous
 * (synchronous_commit off): losing it in a crash only publishes its rows again.
 */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { table: t, broker, logger: log } = opts;
  const channel = outboxChannel(opts.schemaName ?? outboxSchemaName(t));
  const batchSize = opts.batchSize ?? 100;
  const maxBackoffMs = opts.maxBackoffMs ?? 30_000;

  const maxRounds = Math.max(1, opts.maxRoundsInFlight ?? 3);
  const tableName = qualifiedTableName(t);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`outbox relay: batchSize must be a positive integer, got ${batchSize}`);
  const claimIds = prepared('(text[])', `SELECT id, payload FROM ${tableName} WHERE id = ANY($1) AND published_at IS NULL ORDER BY created_at FOR UPDATE SKIP LOCKED`);
  const claimScan = prepared('', `SELECT id, payload FROM ${tableName} WHERE published_at IS NULL ORDER BY created_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`);
  const mark = prepared('(text[])', `UPDATE ${tableName} SET published_at = now() WHERE id = ANY($1)`);
  const statements = [claimIds, claimScan, mark];
  const rule = opts.routingKey ?? outboxRoutingKeyRule(t);

  /**
   * The rule's key, or the bare type should the rule throw or give a key of another type: every consumer
   * binds `<type>.#`, so the event still reaches all of them (and a consumer binding only a qualified key
   * misses it, which its guard on the content would have had to decide anyway). A row is never held back.
   */
  function routingKeyOf(envelope: EventEnvelope): string {
    if (!rule) return envelope.type;
    try {
      const key = rule(envelope);
      if (typeof key === 'string' && isRoutingKeyOf(envelope.type, key) && Buffer.byteLength(key) <= 255) return key;
      log.error('outbox routing rule gave a key that is not of the event type; published under its type', { event_id: envelope.id, type: envelope.type, routing_key: String(key) });
    } catch (err) {
      log.error('outbox routing rule failed; published under its type', { event_id: envelope.id, type: envelope.type, error: describeError(err) });
    }
    return envelope.type;
  }

  let stopped = false;
  /** Rounds started and not finished (each holds its claimed rows in its own transaction). */
  const rounds = new Set<Promise<void>>();
  /** A round is claiming rows and has not yet put them on the channel: the next must wait for that. */
  let claiming = false;
  /** Ids named by notifications, in commit order, not yet taken by a round. */
  const pendingIds = new Set<string>();
  /** A round over every unpublished row is owed (start, poll, NOTIFY without ids, LISTEN back, a failure, a full scan). */
  let scanDue = true;
  let failureStreak = 0;
  let backoffUntil = 0;
  let backoffTimer: NodeJS.Timeout | undefined;

  const pollTimer = setInterval(() => look(), opts.pollIntervalMs ?? 1000);

  function look(): void {
    scanDue = true;
    kick();
  }

  function onNotification(payload: string): void {
    const ids = parseOutboxNotifyPayload(payload);
    if (!ids) return look();
    for (const id of ids) pendingIds.add(id);
    if (pendingIds.size > MAX_PENDING_BATCHES * batchSize) {
      // Far behind (the broker is down, say): a scan finds them all without holding their ids.
      pendingIds.clear();
      scanDue = true;
    }
    kick();
  }

  /**
   * Starts a round when there is work, unless one is still claiming or `maxRounds` are waiting for their
   * confirms (then the end of that claim or round calls kick again). Rounds overlap: the next one starts
   * as soon as the previous one has handed its messages to the channel, so an event committed during a
   * round waits for that round's claim, not for its confirms, and every id notified meanwhile goes out in
   * that next round together. SKIP LOCKED keeps their rows apart, and since each round publishes only
   * after the previous one has published, the channel (and so the broker) still sees the rows in commit order.
   */
  function kick(): void {
    if (stopped || (!scanDue && pendingIds.size === 0)) return;
    if (claiming || rounds.size >= maxRounds) return;
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
    let ids: string[] | undefined;
    if (scanDue) scanDue = false;
    else ids = takePending();
    claiming = true;
    const round: Promise<void> = runRound(ids)
      .catch((err: unknown) => {
        log.error('outbox relay round failed unexpectedly', { channel, error: describeError(err) });
      })
      .finally(() => {
        rounds.delete(round);
        kick();
      });
    rounds.add(round);
  }

  function takePending(): string[] {
    const ids: string[] = [];
    for (const id of pendingIds) {
      if (ids.length === batchSize) break;
      ids.push(id);
      pendingIds.delete(id);
    }
    return ids;
  }

  function handedOver(): void {
    if (!claiming) return;
    claiming = false;
    kick();
  }

  function noteFailure(reason: string): void {
    failureStreak += 1;
    scanDue = true; // rows left unpublished, or skipped meanwhile, are found by the next round's scan
    const delay = Math.min(maxBackoffMs, 100 * 2 ** Math.min(failureStreak, 12));
    backoffUntil = Date.now() + delay;
    // Once per outage at warn level; the rest would only repeat it.
    if (failureStreak === 1) log.warn('outbox relay cannot publish; backing off', { channel, reason, retry_in_ms: delay });
    else log.debug('outbox relay still backing off', { channel, reason, retry_in_ms: delay, failures: failureStreak });
  }

  async function runRound(ids: string[] | undefined): Promise<void> {
    let result: { claimed: number; failed: number; firstError?: string };
    try {
      result = await round(ids);
    } catch (err) {
      return noteFailure(describeError(err));
    } finally {
      handedOver();
    }
    if (result.failed > 0) return noteFailure(result.firstError ?? 'publish failed');
    if (failureStreak > 0) log.info('outbox relay publishing again', { channel });
    failureStreak = 0;
    backoffUntil = 0;
    if (!ids && result.claimed === batchSize) scanDue = true; // a full scan: more may be waiting
  }

  /** `PREPARE`s of the statements this connection does not have yet, to send in front of a use. */
  function preparesFor(client: PoolClient): string {
    let names = preparedOn.get(client);
    if (!names) preparedOn.set(client, (names = new Set()));
    const missing = statements.filter((st) => !names.has(st.name));
    if (missing.length === 0) return '';
    for (const st of missing) names.add(st.name);
    return `${missing.map((st) => st.prepare).join('; ')}; `;
  }

  /**
   * One round in two round trips on a pooled connection: `BEGIN; EXECUTE claim`, then, after the confirms,
   * the marks and `COMMIT` together. Both go as simple-protocol text (several statements in one message);
   * the only values in them are the batch size, ids named by NOTIFY and row ids read from the table
   * itself, written as quoted literals.
   */
  async function round(ids: string[] | undefined): Promise<{ claimed: number; failed: number; firstError?: string }> {
    const client = await opts.pool.connect();
    let open = false;
    let broken: Error | undefined;
    try {
      open = true;
      const claim = ids ? `EXECUTE ${claimIds.name}(${textArray(ids)})` : `EXECUTE ${claimScan.name}`;
      const results = (await client.query(`${preparesFor(client)}BEGIN; ${claim}`)) as unknown as Array<QueryResult<{ id: string; payload: EventEnvelope }>>;
      const rows = results[results.length - 1]!.rows;
      if (!ids) for (const r of rows) pendingIds.delete(r.id); // claimed here: no round by id for them
      if (rows.length === 0) {
        await client.query('COMMIT');
        open = false;
        return { claimed: 0, failed: 0 };
      }

      // Published together on one channel: the broker keeps their order and confirms in bulk. Each
      // publish is on the channel when broker.publish returns its promise, so the next round may start.
      const pending = rows.map((r) => broker.publish(r.payload, routingKeyOf(r.payload)));
      handedOver();
      const settled = await Promise.allSettled(pending);
      const published: string[] = [];
      const failed: Array<{ id: string; error: string }> = [];
      settled.forEach((res, i) => {
        const id = rows[i]!.id;
        if (res.status === 'fulfilled') published.push(id);
        else failed.push({ id, error: describeError(res.reason) });
      });
      const sqls: string[] = [];
      if (published.length > 0) sqls.push(`EXECUTE ${mark.name}(${textArray(published)})`);
      for (const f of failed) {
        sqls.push(`UPDATE ${tableName} SET attempts = attempts + 1, last_error = ${literal(f.error)} WHERE id = ${literal(f.id)}`);
        log.warn('outbox event not published', { event_id: f.id, error: f.error });
      }
      // The marks need not wait for the WAL flush: a mark lost in a crash only publishes its row again
      // (at-least-once, as after a crash between confirm and commit), which consumers deduplicate.
      sqls.push('SET LOCAL synchronous_commit = off', 'COMMIT');
      await client.query(sqls.join('; '));
      open = false;
      log.debug('outbox round', { channel, published: published.length, failed: failed.length });
      return { claimed: rows.length, failed: failed.length, firstError: failed[0]?.error };
    } catch (err) {
      // This connection's prepared statements are not what we think: drop it, the next one starts afresh.
      if (PREPARED_STATE_LOST.has(pgErrorCode(err) ?? '')) broken = err instanceof Error ? err : new Error(String(err));
      if (open && !broken) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      if (broken) preparedOn.delete(client);
      client.release(broken);
    }
  }

  const listener = startNotificationListener({
    pool: opts.pool,
    channel,
    onNotification,
    onListening: look, // rows committed while nobody was listening
    logger: log,
    retryMs: LISTEN_RETRY_MS,
    label: 'outbox relay',
    meanwhile: 'polling meanwhile',
  });
  look();

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
