-- Every change to a connection (other than the refresher's and busy queries' bookkeeping columns) and
-- every change to a busy snapshot announces the connection id on the channel calendar_sync_changed
-- (delivered on commit, to every replica listening), so in-process copies of that connection and its
-- snapshot are dropped (src/store/store-cache.ts). `*` drops every copy.
CREATE OR REPLACE FUNCTION "calendar_sync"."notify_connection_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  id_column text := TG_ARGV[0];
BEGIN
  IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'calendar_connections'
     AND (to_jsonb(NEW) - 'last_queried_at' - 'refresh_lease_until') = (to_jsonb(OLD) - 'last_queried_at' - 'refresh_lease_until') THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('calendar_sync_changed', to_jsonb(NEW) ->> id_column);
  END IF;
  IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR (to_jsonb(OLD) ->> id_column) IS DISTINCT FROM (to_jsonb(NEW) ->> id_column)) THEN
    PERFORM pg_notify('calendar_sync_changed', to_jsonb(OLD) ->> id_column);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "calendar_connections_changed" AFTER INSERT OR UPDATE OR DELETE ON "calendar_sync"."calendar_connections"
  FOR EACH ROW EXECUTE FUNCTION "calendar_sync"."notify_connection_changed"('id');
--> statement-breakpoint
CREATE TRIGGER "busy_snapshots_changed" AFTER INSERT OR UPDATE OR DELETE ON "calendar_sync"."busy_snapshots"
  FOR EACH ROW EXECUTE FUNCTION "calendar_sync"."notify_connection_changed"('connection_id');
--> statement-breakpoint
-- TRUNCATE fires no row trigger: it drops every copy.
CREATE OR REPLACE FUNCTION "calendar_sync"."notify_connections_truncated"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('calendar_sync_changed', '*');
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "calendar_connections_truncated" AFTER TRUNCATE ON "calendar_sync"."calendar_connections"
  FOR EACH STATEMENT EXECUTE FUNCTION "calendar_sync"."notify_connections_truncated"();
--> statement-breakpoint
CREATE TRIGGER "busy_snapshots_truncated" AFTER TRUNCATE ON "calendar_sync"."busy_snapshots"
  FOR EACH STATEMENT EXECUTE FUNCTION "calendar_sync"."notify_connections_truncated"();
