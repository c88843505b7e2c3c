-- Group commit for creates (docs/booking.md, "Group commit"): the creates that arrive while an earlier batch
-- is in the database go in as one call of this function, one transaction for all of them. Per item it runs
-- the statements of one idempotent create (libs/idempotency runIdempotent + createBooking), in that order:
--   1. pg_try_advisory_xact_lock(lock_key): taken by another transaction -> 'in_progress' (nothing written);
--   2. a live key row -> 'found' with its fingerprint, status and body (the caller replays it or answers 422);
--   3. the Booking insert under the exclusion constraint (ON CONFLICT DO NOTHING: an overlap is "no row");
--   4. the booking.created outbox row when the insert took ('created'), none when it did not ('conflict');
--   5. the key row with the answer (201 body, or the stored 409 slot_unavailable body).
-- Items without key_id (no Idempotency-Key header) skip 1, 2 and 5. One NOTIFY for the batch wakes the relay.
-- Every value is computed by the caller (ids, timestamps, bodies); the function only decides which answer
-- each item gets. The caller never puts two items with one key_id in a batch.
CREATE FUNCTION "booking"."create_bookings"(items jsonb, outbox_channel text)
RETURNS TABLE (item_index integer, outcome text, response_status integer, response_body text, response_fingerprint text, response_sealed boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it jsonb;
  n integer := 0;
  inserted text;
  written text;
  announced boolean := false;
BEGIN
  FOR it IN SELECT value FROM jsonb_array_elements(items) LOOP
    item_index := n;
    n := n + 1;
    response_fingerprint := NULL;
    response_sealed := false;
    IF it->>'key_id' IS NOT NULL THEN
      IF NOT pg_try_advisory_xact_lock((it->>'lock_key')::bigint) THEN
        outcome := 'in_progress'; response_status := NULL; response_body := NULL;
        RETURN NEXT;
        CONTINUE;
      END IF;
      SELECT k.response_status, k.response_body, k.fingerprint, k.sealed
        INTO response_status, response_body, response_fingerprint, response_sealed
        FROM "booking"."idempotency_keys" k
        WHERE k.id = it->>'key_id' AND k.workspace_id = it->>'workspace_id' AND k.expires_at > now();
      IF FOUND THEN
        outcome := 'found';
        RETURN NEXT;
        CONTINUE;
      END IF;
      response_fingerprint := NULL;
      response_sealed := false;
    END IF;

    INSERT INTO "booking"."bookings" (id, workspace_id, status, version, source, invitation_id, event_type_id, host_id,
        start_at, end_at, blocked_from, blocked_to, guest_name, guest_email, guest_timezone, meeting_type, join_url,
        calendar_status, calendar_error_code, calendar_written_at, metadata, created_at, rescheduled_at, cancelled_at)
      VALUES (it->>'id', it->>'workspace_id', 'confirmed', 1, it->>'source', it->>'invitation_id', it->>'event_type_id', it->>'host_id',
        (it->>'start_at')::timestamptz, (it->>'end_at')::timestamptz, (it->>'blocked_from')::timestamptz, (it->>'blocked_to')::timestamptz,
        it->>'guest_name', it->>'guest_email', it->>'guest_timezone', it->>'meeting_type', NULL,
        'pending', NULL, NULL, (it->>'metadata')::json, (it->>'created_at')::timestamptz, NULL, NULL)
      ON CONFLICT DO NOTHING
      RETURNING id INTO inserted;
    IF inserted IS NULL THEN
      outcome := 'conflict';
      response_status := 409;
      response_body := it->>'conflict_body';
    ELSE
      INSERT INTO "booking"."outbox" (id, type, workspace_id, payload)
        VALUES (it->>'event_id', 'booking.created', it->>'workspace_id', (it->>'event')::jsonb);
      announced := true;
      outcome := 'created';
      response_status := 201;
      response_body := it->>'created_body';
    END IF;

    IF it->>'key_id' IS NOT NULL THEN
      INSERT INTO "booking"."idempotency_keys" AS k (id, workspace_id, fingerprint, response_status, response_body, sealed, created_at, expires_at)
        VALUES (it->>'key_id', it->>'workspace_id', it->>'fingerprint', response_status, response_body, false, now(),
                now() + make_interval(secs => (it->>'retention_s')::double precision))
        ON CONFLICT (id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, fingerprint = EXCLUDED.fingerprint,
          response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, sealed = EXCLUDED.sealed,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= now()
        RETURNING k.id INTO written;
      -- A live row cannot exist (the lock is ours and the lookup saw none); failing loudly beats a mutation without its key.
      IF written IS NULL THEN
        RAISE EXCEPTION 'idempotency key row already exists although its lock was free';
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF announced THEN
    PERFORM pg_notify(outbox_channel, '');
  END IF;
END
$$;
