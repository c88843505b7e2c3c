CREATE TABLE "calendar_sync"."booking_syncs" (
	"booking_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"booking" jsonb NOT NULL,
	"booking_version" integer NOT NULL,
	"written_version" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"error_code" text,
	"event_uid" text NOT NULL,
	"object_url" text,
	"etag" text,
	"join_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "calendar_sync"."busy_snapshots" (
	"connection_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"range_from" timestamp with time zone NOT NULL,
	"range_to" timestamp with time zone NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"change_marker" text,
	"items" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "calendar_sync"."calendar_connections" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"provider" text NOT NULL,
	"url" text NOT NULL,
	"username" text NOT NULL,
	"password_sealed" text NOT NULL,
	"calendar_url" text NOT NULL,
	"host_timezone" text NOT NULL,
	"conferencing_url_template" text,
	"status" text DEFAULT 'connected' NOT NULL,
	"error_code" text,
	"last_queried_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refresh_lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calendar_sync"."busy_snapshots" ADD CONSTRAINT "busy_snapshots_connection_id_calendar_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "calendar_sync"."calendar_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "booking_syncs_host_idx" ON "calendar_sync"."booking_syncs" USING btree ("workspace_id","host_id");--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_connections_host_uq" ON "calendar_sync"."calendar_connections" USING btree ("workspace_id","host_id");--> statement-breakpoint
CREATE INDEX "calendar_connections_last_queried_idx" ON "calendar_sync"."calendar_connections" USING btree ("last_queried_at");