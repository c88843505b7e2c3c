-- Every write to a table the Slots answer is computed from announces the host it concerns on the
-- channel availability_slots_changed (delivered on commit, to every replica listening), so cached
-- Slots answers of that host are dropped (src/domain/slots-cache.ts). The trigger's argument names
-- the column holding the host id.
CREATE OR REPLACE FUNCTION "availability"."notify_slots_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  new_host text;
  old_host text;
BEGIN
  IF TG_OP <> 'DELETE' THEN
    new_host := to_jsonb(NEW) ->> TG_ARGV[0];
    PERFORM pg_notify('availability_slots_changed', new_host);
  END IF;
  IF TG_OP <> 'INSERT' THEN
    old_host := to_jsonb(OLD) ->> TG_ARGV[0];
    IF old_host IS DISTINCT FROM new_host THEN
      PERFORM pg_notify('availability_slots_changed', old_host);
    END IF;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "hosts_slots_changed" AFTER INSERT OR UPDATE OR DELETE ON "availability"."hosts"
  FOR EACH ROW EXECUTE FUNCTION "availability"."notify_slots_changed"('id');
--> statement-breakpoint
CREATE TRIGGER "schedules_slots_changed" AFTER INSERT OR UPDATE OR DELETE ON "availability"."schedules"
  FOR EACH ROW EXECUTE FUNCTION "availability"."notify_slots_changed"('host_id');
--> statement-breakpoint
CREATE TRIGGER "event_types_slots_changed" AFTER INSERT OR UPDATE OR DELETE ON "availability"."event_types"
  FOR EACH ROW EXECUTE FUNCTION "availability"."notify_slots_changed"('host_id');
--> statement-breakpoint
CREATE TRIGGER "booked_intervals_slots_changed" AFTER INSERT OR UPDATE OR DELETE ON "availability"."booked_intervals"
  FOR EACH ROW EXECUTE FUNCTION "availability"."notify_slots_changed"('host_id');
--> statement-breakpoint
CREATE TRIGGER "calendar_connections_slots_changed" AFTER INSERT OR UPDATE OR DELETE ON "availability"."calendar_connections"
  FOR EACH ROW EXECUTE FUNCTION "availability"."notify_slots_changed"('host_id');
--> statement-breakpoint
-- TRUNCATE fires no row trigger: it drops every host's answers.
CREATE OR REPLACE FUNCTION "availability"."notify_slots_truncated"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('availability_slots_changed', '*');
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "booked_intervals_slots_truncated" AFTER TRUNCATE ON "availability"."booked_intervals"
  FOR EACH STATEMENT EXECUTE FUNCTION "availability"."notify_slots_truncated"();
