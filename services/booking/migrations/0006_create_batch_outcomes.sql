-- Group commit for creates (docs/booking.md, "Create"): the creates that arrive while an earlier batch is in
-- the database go in as one call of this function, one transaction for all of them. It is the store half of
-- the create use case (src/domain/create-booking.ts); its contract is BookingCreates (src/domain/ports.ts).
-- Per item, the idempotency protocol is @sched/idempotency's own SQL (migration 0005), not a copy:
--   1. with a key: booking.idempotency_claim -> 'in_progress' (nothing written) or 'found' (the stored
--      answer; the caller replays it or answers 422), else the item runs:
--   2. kind 'insert': the Booking under the exclusion constraint (ON CONFLICT DO NOTHING: an overlap is "no
--      row") and, when it took, its booking.created outbox row -> 'created', else 'slot_taken';
--      kind 'refuse' (the slot check said no) -> 'refused', nothing but the key row is written;
--      kind 'fail' (the slot check could not be had) -> 'failed', nothing is written (a 5xx is not stored);
--   3. with a key, except 'failed': booking.idempotency_record with the answer the caller gave for that end
--      (created_body, conflict_body or refusal_body). The caller computes every value (ids, timestamps,
--      event, answers); the function writes them and says which way each write ended.
-- One NOTIFY for the batch wakes the relay. The caller never puts two items with one key_id in a batch.
DROP FUNCTION "booking"."create_bookings"(jsonb, text);
--> statement-breakpoint
CREATE FUNCTION "booking"."create_bookings"(items jsonb, outbox_channel text)
RETURNS TABLE (item_index integer, outcome text, response_status integer, response_body text, response_fingerprint text, response_sealed boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it jsonb;
  n integer := 0;
  claim record;
  inserted text;
  announced boolean := false;
BEGIN
  FOR it IN SELECT value FROM jsonb_array_elements(items) LOOP
    item_index := n;
    n := n + 1;
    response_status := NULL;
    response_body := NULL;
    response_fingerprint := NULL;
    response_sealed := NULL;
    IF it->>'key_id' IS NOT NULL THEN
      SELECT * INTO claim FROM "booking"."idempotency_claim"(it->>'key_id', (it->>'lock_key')::bigint, it->>'workspace_id');
      IF claim.state = 'in_progress' THEN
        outcome := 'in_progress';
        RETURN NEXT;
        CONTINUE;
      END IF;
      IF claim.state = 'found' THEN
        outcome := 'found';
        response_status := claim.response_status;
        response_body := claim.response_body;
        response_fingerprint := claim.fingerprint;
        response_sealed := claim.sealed;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;

    IF it->>'kind' = 'fail' THEN
      outcome := 'failed';
      RETURN NEXT;
      CONTINUE;
    ELSIF it->>'kind' = 'refuse' THEN
      outcome := 'refused';
      response_status := (it->>'refusal_status')::integer;
      response_body := it->>'refusal_body';
    ELSE
      inserted := NULL;
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
        outcome := 'slot_taken';
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
    END IF;

    IF it->>'key_id' IS NOT NULL THEN
      PERFORM "booking"."idempotency_record"(it->>'key_id', it->>'workspace_id', it->>'fingerprint', response_status, response_body,
        false, (it->>'retention_s')::double precision);
    END IF;
    RETURN NEXT;
  END LOOP;
  IF announced THEN
    PERFORM pg_notify(outbox_channel, '');
  END IF;
END
$$;
