import { pgErrorCode } from './pg-errors';

/**
 * "A store the request needs cannot be reached right now": Postgres or RabbitMQ is down, restarting,
 * refusing connections or full. An expected outage, not a bug: the HTTP edge answers it with
 * `503 service_unavailable` and a Retry-After (decisions.md §2), never `500 internal_error`.
 * The one place that knows what these errors look like.
 */
export interface StoreUnavailable {
  /** Which store, when the error says so; a bare socket error (ECONNREFUSED …) names only its address. */
  store?: 'postgres' | 'rabbitmq';
  /**
   * A short cause for the log: a SQLSTATE, the driver's fixed message, or a socket error's own message
   * (`connect ECONNREFUSED 10.0.0.5:5432`); never a query, its parameters or a URL.
   */
  reason: string;
}

/**
 * Socket errors of a connection to a store. Raw socket errors reach the HTTP edge only from the
 * stores' drivers: calls to other services come wrapped in UpstreamError (502/504), which is never
 * classified here.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs meaning the server cannot serve now: class 08 (connection exception) is matched as a
 * class; 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting
 * down, in recovery), 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * node-postgres and pg-pool errors that carry no code: the connection ended under a query
 * ("Connection terminated unexpectedly", "Connection terminated due to connection timeout"), a client
 * that already lost its connection, the pool's wait for a connection running out.
 */
const PG_MESSAGES = /^(Connection terminated|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)/;

/**
 * amqplib's channel or connection gone under a call ("Channel closed" on a closed channel, "channel
 * closed" for a pending confirm, "Connection closed: 320 (CONNECTION-FORCED) …", a pending RPC's
 * "Channel ended, …", the handshake's "Socket closed abruptly …", "Heartbeat timeout"). Not "Channel
 * closed by server: 404 …": the broker refusing an operation is an answer, not an outage.
 */
const AMQP_MESSAGES = /^(?:channel closed|connection closed\b.*|channel ended, no reply will be forthcoming|socket closed abruptly.*|heartbeat timeout)$/i;

/** drizzle wraps a failed query (DrizzleQueryError) and keeps the driver's error as `cause`. */
function isDrizzleQueryError(err: Error): boolean {
  return err.constructor?.name === 'DrizzleQueryError' || (typeof (err as { query?: unknown }).query === 'string' && 'params' in err);
}

function classifyOne(err: unknown): StoreUnavailable | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as Error & { code?: unknown };
  const code = pgErrorCode(err);
  const message = typeof e.message === 'string' ? e.message.split('\n')[0]! : '';
  // @sched/messaging's BrokerUnavailableError (not connected, reconnecting, blocked), by name and code:
  // libs/db does not depend on messaging.
  if (e.name === 'BrokerUnavailableError' || code === 'BROKER_UNAVAILABLE') return { store: 'rabbitmq', reason: 'broker unavailable' };
  if (AMQP_MESSAGES.test(message)) return { store: 'rabbitmq', reason: message.slice(0, 80) };
  if (code !== undefined) {
    if (SOCKET_CODES.has(code)) return { reason: message.includes(code) ? message.slice(0, 120) : code };
    if (UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return { store: 'postgres', reason: `SQLSTATE ${code}` };
  }
  const m = PG_MESSAGES.exec(message);
  if (m) return { store: 'postgres', reason: m[1] === 'Connection terminated' ? message.slice(0, 80) : m[1]! };
  return undefined;
}

/**
 * The store outage behind `err`, if it is one: the error itself, the driver error a DrizzleQueryError
 * wraps (`cause`), or any of an AggregateError's errors (a connect to every address of a host refused).
 * Anything else (a bug, a constraint violation, a statement timeout, an upstream service's failure) is
 * not an outage: undefined.
 */
export function storeUnavailable(err: unknown, depth = 0): StoreUnavailable | undefined {
  if (depth > 3 || typeof err !== 'object' || err === null) return undefined;
  if ((err as Error).name === 'UpstreamError') return undefined;
  const own = classifyOne(err);
  if (own) return own;
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const found = storeUnavailable(inner, depth + 1);
      if (found) return found;
    }
  }
  if (err instanceof Error && isDrizzleQueryError(err)) return storeUnavailable(err.cause, depth + 1);
  return undefined;
}

export function isStoreUnavailable(err: unknown): boolean {
  return storeUnavailable(err) !== undefined;
}
