-- @sched/idempotency: the idempotency protocol (libs/idempotency/src/protocol-sql.ts), generated for schema booking.
-- Do not edit here: the text is the library's (libs/idempotency/test/protocol-sql.test.ts checks it).
CREATE FUNCTION "booking"."idempotency_peek"(key_id text, key_workspace_id text)
RETURNS TABLE (response_status integer, response_body text, fingerprint text, sealed boolean)
LANGUAGE sql STABLE AS $$
  SELECT k.response_status, k.response_body, k.fingerprint, k.sealed
    FROM "booking"."idempotency_keys" k
    WHERE k.id = key_id AND k.workspace_id = key_workspace_id AND k.expires_at > now()
$$;

CREATE FUNCTION "booking"."idempotency_claim"(key_id text, lock_key bigint, key_workspace_id text)
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
    FROM "booking"."idempotency_peek"(key_id, key_workspace_id) p;
  IF NOT FOUND THEN
    state := 'free';
  END IF;
  RETURN NEXT;
END
$$;

CREATE FUNCTION "booking"."idempotency_record"(key_id text, key_workspace_id text, key_fingerprint text, answer_status integer, answer_body text, answer_sealed boolean, retention_s double precision)
RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  written text;
BEGIN
  INSERT INTO "booking"."idempotency_keys" AS k (id, workspace_id, fingerprint, response_status, response_body, sealed, created_at, expires_at)
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
