import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { DomainError, ERROR_STATUS, isDomainError } from '@sched/contracts';
import { rowsOf, type AnyPgDatabase, type TxOf } from './db-types';
import { advisoryLockKey, scopedKeyId, type IdempotencyScope } from './fingerprint';
import type { IdempotencyTable } from './idempotency-table';

/** decisions.md §4: keys are kept 24 hours. */
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Header set on a replayed answer (decisions.md §4). */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** What a request answered: an HTTP status and its JSON envelope (`{data|error, meta:{request_id}}`). */
export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotentOutcome extends StoredResponse {
  /** True when the answer is a replay of a finished request. */
  replayed: boolean;
  /** Headers to add to the answer (`Idempotent-Replayed: true` on a replay). */
  headers: Record<string, string>;
}

/** Structurally a @sched/secrets SecretBox: what sealed storage needs of it. */
export interface ResponseSealer {
  seal(plaintext: string, associatedData?: string): string;
  open(sealed: string, associatedData?: string): string;
}

export interface RunIdempotentOptions<TDb extends AnyPgDatabase> {
  db: TDb;
  table: IdempotencyTable;
  scope: IdempotencyScope;
  /** The validated key (parseIdempotencyKey), or undefined: then execute simply runs in a transaction. */
  key: string | undefined;
  /** requestFingerprint(method, path, body). */
  fingerprint: string;
  /** This request's id: put into `meta.request_id` of a replayed body and of a stored error body. */
  requestId: string;
  /**
   * The mutation. Runs inside the transaction that also writes the key row (and should write its outbox
   * events through `tx`). A 4xx is signalled by throwing a DomainError: its partial writes are rolled back
   * to a savepoint and the error answer is stored. Any other throw rolls everything back and is rethrown.
   */
  execute(tx: TxOf<TDb>): Promise<StoredResponse>;
  /**
   * Run `execute` inside a savepoint (default true), so a DomainError thrown after some writes, or after a
   * failed statement, still leaves a transaction that can store the error answer. Pass false only when
   * execute throws its 4xx DomainErrors before its first write and never after a failed statement (e.g. it
   * turns conflicts into `ON CONFLICT DO NOTHING` + a check): that saves two round trips per request.
   */
  savepoint?: boolean;
  /** Seals the stored body (e.g. one carrying an invitation_url credential); the row id is bound as AAD. */
  secretBox?: ResponseSealer;
  retentionMs?: number;
  /** Overrides which thrown errors become stored answers; undefined means "not stored, rethrow". */
  storableError?(err: unknown, requestId: string): StoredResponse | undefined;
}

/** decisions.md §4: 2xx and 4xx are stored; 5xx and 429 are not (the key is released for a fresh retry). */
export function isStorableStatus(status: number): boolean {
  return (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429);
}

/** A DomainError with a storable status becomes the usual error envelope (decisions.md §2). */
export function defaultStorableError(err: unknown, requestId: string): StoredResponse | undefined {
  if (!isDomainError(err)) return undefined;
  const status = err.status ?? ERROR_STATUS[err.code];
  if (!isStorableStatus(status)) return undefined;
  return { status, body: { error: { code: err.code, message: err.message, details: err.details }, meta: { request_id: requestId } } };
}

/** A success answer in the usual envelope (`{data, meta: {request_id}}`, decisions.md §2), as it is stored and sent. */
export function dataAnswer(status: number, data: unknown, requestId: string): StoredResponse {
  return { status, body: { data, meta: { request_id: requestId } } };
}

/** The stored body with only `meta.request_id` replaced by the new request's (decisions.md §4). */
export function withRequestId(body: unknown, requestId: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const meta = (body as { meta?: unknown }).meta;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return body;
  return { ...(body as Record<string, unknown>), meta: { ...(meta as Record<string, unknown>), request_id: requestId } };
}

/**
 * `schema.table` of a key table, worked out once per table: drizzle's getTableConfig builds the table's
 * whole description (columns, indexes) on every call, and idempotencyRowIdentity runs per request.
 */
const qualifiedNames = new WeakMap<IdempotencyTable, string>();
function qualifiedName(table: IdempotencyTable): string {
  let name = qualifiedNames.get(table);
  if (name === undefined) {
    const cfg = getTableConfig(table);
    name = `${cfg.schema ?? 'public'}.${cfg.name}`;
    qualifiedNames.set(table, name);
  }
  return name;
}

/** A protocol function (protocol-sql.ts) in the schema of the table. */
function protocolFunction(table: IdempotencyTable, name: 'peek' | 'claim' | 'record'): SQL {
  return sql.raw(`"${getTableConfig(table).schema ?? 'public'}"."idempotency_${name}"`);
}

/** The key row's primary key and the advisory lock key that guards it (see runIdempotent, step 1). */
export function idempotencyRowIdentity(table: IdempotencyTable, scope: IdempotencyScope, key: string): { id: string; lockKey: string } {
  const id = scopedKeyId(scope, key);
  return { id, lockKey: advisoryLockKey(qualifiedName(table), id) };
}

/** A live key row found under the lock (see runIdempotent, step 2). */
export interface FoundIdempotencyRow {
  fingerprint: string;
  status: number;
  body: string;
  sealed: boolean;
}

/**
 * The finished answer under a key (the schema's `idempotency_peek`), looked at without taking the key's
 * lock: for a caller that answers a replay before starting work that is not itself under the key (the
 * invitation page's booking saga). What runs under the key still decides in runIdempotent's claim.
 */
export async function findLiveAnswer(db: AnyPgDatabase, table: IdempotencyTable, workspaceId: string, id: string): Promise<FoundIdempotencyRow | null> {
  const [row] = rowsOf<{ response_status: number; response_body: string; fingerprint: string; sealed: boolean }>(
    await db.execute(sql`SELECT response_status, response_body, fingerprint, sealed FROM ${protocolFunction(table, 'peek')}(${id}, ${workspaceId})`),
  );
  return row ? { status: row.response_status, body: row.response_body, fingerprint: row.fingerprint, sealed: row.sealed } : null;
}

/**
 * What a request whose key already has a finished row answers: the same fingerprint replays the stored
 * status and body with this request's `meta.request_id` (`Idempotent-Replayed: true`); another fingerprint
 * throws `422 idempotency_key_reused`.
 */
export function replayFoundRow(
  found: FoundIdempotencyRow,
  request: { id: string; fingerprint: string; requestId: string; secretBox?: ResponseSealer },
): IdempotentOutcome {
  if (found.fingerprint !== request.fingerprint) throw new DomainError('idempotency_key_reused');
  const text = found.sealed ? open(request.secretBox, found.body, request.id) : found.body;
  return {
    status: found.status,
    body: withRequestId(JSON.parse(text), request.requestId),
    replayed: true,
    headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
  };
}

/**
 * Runs a mutation at most once per Idempotency-Key (decisions.md §4), in ONE transaction with its key row.
 * Steps 1–2 are the schema's `idempotency_claim` function and step 3's key row its `idempotency_record`
 * (protocol-sql.ts): the same SQL a batched writer runs per item.
 *
 * 1. `pg_try_advisory_xact_lock(hash(table, scope, key))`. Failing to get it means the same key is
 *    executing right now: `409 idempotency_request_in_progress` (Retry-After: 1) at once, without waiting.
 *    The lock lives exactly as long as the transaction, so a crash or rollback releases the key.
 * 2. Look up a live (unexpired) row. Postgres makes a commit visible before it releases the transaction's
 *    locks, so whoever gets the lock after a finished run sees its row: same fingerprint → replay the
 *    stored status and body (`Idempotent-Replayed: true`); another fingerprint → `422 idempotency_key_reused`.
 * 3. Otherwise run `execute` inside a savepoint, then insert the row with the answer, and commit: the row,
 *    the mutation and its outbox events become visible together or not at all. A storable DomainError
 *    (4xx) rolls back to the savepoint and is stored as the answer; anything else rolls back everything.
 *    (`savepoint: false` skips the savepoint for mutations whose 4xx come before any write.)
 */
export async function runIdempotent<TDb extends AnyPgDatabase>(opts: RunIdempotentOptions<TDb>): Promise<IdempotentOutcome> {
  const { db, table: t, key } = opts;
  if (key === undefined) {
    const response = await db.transaction((tx) => opts.execute(tx as TxOf<TDb>));
    return { ...response, replayed: false, headers: {} };
  }
  const { id, lockKey } = idempotencyRowIdentity(t, opts.scope, key);
  const toStored = opts.storableError ?? defaultStorableError;
  const retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;

  return db.transaction(async (tx): Promise<IdempotentOutcome> => {
    // Steps 1 and 2 in one round trip: the key's lock, then (under it) the live row.
    const [claim] = rowsOf<{ state: 'in_progress' | 'found' | 'free'; response_status: number; response_body: string; fingerprint: string; sealed: boolean }>(
      await tx.execute(sql`SELECT state, response_status, response_body, fingerprint, sealed FROM ${protocolFunction(t, 'claim')}(${id}, ${lockKey}::bigint, ${opts.scope.workspaceId})`),
    );
    if (claim?.state === 'in_progress') throw new DomainError('idempotency_request_in_progress', { retryAfterSeconds: 1 });
    if (claim?.state === 'found') {
      const found = { fingerprint: claim.fingerprint, status: claim.response_status, body: claim.response_body, sealed: claim.sealed };
      return replayFoundRow(found, { id, fingerprint: opts.fingerprint, requestId: opts.requestId, secretBox: opts.secretBox });
    }

    let response: StoredResponse;
    try {
      response = opts.savepoint === false ? await opts.execute(tx as TxOf<TDb>) : await tx.transaction((sp) => opts.execute(sp as TxOf<TDb>));
    } catch (err) {
      const stored = toStored(err, opts.requestId);
      if (!stored) throw err;
      response = stored;
    }
    if (!isStorableStatus(response.status)) return { ...response, replayed: false, headers: {} };

    // Step 3's key row, with the answer (sealed when asked); a live row already there raises.
    const text = JSON.stringify(response.body);
    const body = opts.secretBox ? opts.secretBox.seal(text, id) : text;
    await tx.execute(
      sql`SELECT ${protocolFunction(t, 'record')}(${id}, ${opts.scope.workspaceId}, ${opts.fingerprint}, ${response.status}::integer, ${body}, ${opts.secretBox !== undefined}, ${retentionMs / 1000}::double precision)`,
    );
    return { ...response, replayed: false, headers: {} };
  });
}

function open(box: ResponseSealer | undefined, sealed: string, id: string): string {
  if (!box) throw new Error('a sealed idempotent response needs the SecretBox to be replayed');
  return box.open(sealed, id);
}
