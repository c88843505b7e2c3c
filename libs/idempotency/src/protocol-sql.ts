/**
 * The idempotency protocol (README "How one request runs"), in SQL: the one implementation of the key lock,
 * the lookup and the key row. runIdempotent calls these two functions; so does any database function that
 * runs many idempotent mutations in one transaction (booking's group-committed creates). A service that
 * uses this library has the text below, for its schema, as one of its migrations (a test in this library
 * checks that every service's migrations hold it exactly).
 *
 * - `idempotency_peek(key_id, workspace_id)`: the live row (`expires_at > now()`) of the key, if any: its
 *   status, body, fingerprint and sealed flag. The one definition of "a finished answer under the key".
 * - `idempotency_claim(key_id, lock_key, workspace_id)`: takes the transaction-scoped advisory lock of the
 *   key (`pg_try_advisory_xact_lock`, never waiting). Not granted: `state 'in_progress'`. Granted: peeks in
 *   a statement that starts after the lock was granted, so a commit that released the lock is visible:
 *   `state 'found'` with the row, else `state 'free'` (the caller runs its mutation in this transaction).
 * - `idempotency_record(key_id, workspace_id, fingerprint, status, body, sealed, retention_s)`: writes the
 *   key row with the answer, replacing an expired row; a live row (impossible under the lock) raises.
 */
export function idempotencyProtocolSql(schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  const s = `"${schema}"`;
  return `-- @sched/idempotency: the idempotency protocol (libs/idempotency/src/protocol-sql.ts), generated for schema ${schema}.
-- Do not edit here: the text is the library's (libs/idempotency/test/protocol-sql.test.ts checks it).
CREATE FUNCTION ${s}."idempotency_peek"(key_id text, key_workspace_id text)
RETURNS TABLE (response_status integer, response_body text, fingerprint text, sealed boolean)
LANGUAGE sql STABLE AS $$
  SELECT k.response_status, k.response_body, k.fingerprint, k.sealed
    FROM ${s}."idempotency_keys" k
    WHERE k.id = key_id AND k.workspace_id = key_workspace_id AND k.expires_at > now()
$$;

CREATE FUNCTION ${s}."idempotency_claim"(key_id text, lock_key bigint, key_workspace_id text)
RETURNS TABLE (state text, response_status integer, response_body text, fingerprint text, sealed boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    state := 'in_progress';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT 'found', p.response_status, p.response_body, p.fingerprint, p.sealed
    INTO state, response_status, response_body, fingerprint, sealed
    FROM ${s}."idempotency_peek"(key_id, key_workspace_id) p;
  IF NOT FOUND THEN
    state := 'free';
  END IF;
  RETURN NEXT;
END
$$;

CREATE FUNCTION ${s}."idempotency_record"(key_id text, key_workspace_id text, key_fingerprint text, answer_status integer, answer_body text, answer_sealed boolean, retention_s double precision)
RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  written text;
BEGIN
  INSERT INTO ${s}."idempotency_keys" AS k (id, workspace_id, fingerprint, response_status, response_body, sealed, created_at, expires_at)
    VALUES (key_id, key_workspace_id, key_fingerprint, answer_status, answer_body, answer_sealed, now(), now() + make_interval(secs => retention_s))
    ON CONFLICT (id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, fingerprint = EXCLUDED.fingerprint,
      response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, sealed = EXCLUDED.sealed,
      created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= now()
    RETURNING k.id INTO written;
  -- A live row cannot exist (the caller holds the key's lock and its claim saw none); failing loudly beats a
  -- mutation committed without its key.
  IF written IS NULL THEN
    RAISE EXCEPTION 'idempotency key row already exists although its lock was free';
  END IF;
END
$$;
`;
}
