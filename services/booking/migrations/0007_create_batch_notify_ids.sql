-- The NOTIFY of booking.create_bookings (migration 0006) names the batch's new outbox rows: its payload is the
-- JSON array of their event ids (libs/messaging outboxNotifyPayload), so the outbox relay claims exactly those
-- rows by primary key instead of scanning for unpublished rows. A payload that would not fit a NOTIFY (8000
-- bytes) is sent empty, which the relay reads as "look". Otherwise the function is 0006's, unchanged.
CREATE OR REPLACE FUNCTION "booking"."create_bookings"(items jsonb, outbox_channel text)
RETURNS TABLE (item_index integer, outcome text, response_status integer, response_body text, response_fingerprint text, response_sealed boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it jsonb;
  n integer := 0;
  claim record;
  inserted text;
  announced jsonb := '[]'::jsonb;
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
        announced := announced || to_jsonb(it->>'event_id');
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
  IF jsonb_array_length(announced) > 0 THEN
    PERFORM pg_notify(outbox_channel, CASE WHEN octet_length(announced::text) < 8000 THEN announced::text ELSE '' END);
  END IF;
END
$$;
