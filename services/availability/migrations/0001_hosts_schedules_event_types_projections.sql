CREATE TABLE "availability"."booked_intervals" (
	"booking_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"event_type_id" text NOT NULL,
	"version" integer NOT NULL,
	"status" text NOT NULL,
	"start_at" timestamp (3) with time zone NOT NULL,
	"end_at" timestamp (3) with time zone NOT NULL,
	"blocked_from" timestamp (3) with time zone NOT NULL,
	"blocked_to" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "availability"."calendar_connections" (
	"host_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"status" text NOT NULL,
	"error_code" text,
	"event_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "availability"."event_types" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"slug" text NOT NULL,
	"duration_minutes" integer NOT NULL,
	"slot_interval_minutes" integer NOT NULL,
	"buffer_before_minutes" integer NOT NULL,
	"buffer_after_minutes" integer NOT NULL,
	"minimum_notice_minutes" integer NOT NULL,
	"maximum_advance_minutes" integer NOT NULL,
	"meeting_type" text NOT NULL,
	"status" text NOT NULL,
	"access" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "availability"."hosts" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"timezone" text NOT NULL,
	"conferencing_url_template" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "availability"."schedules" (
	"host_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"weekly" jsonb NOT NULL,
	"overrides" jsonb NOT NULL,
	"has_availability" boolean NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "availability"."event_types" ADD CONSTRAINT "event_types_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "availability"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "availability"."schedules" ADD CONSTRAINT "schedules_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "availability"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "booked_intervals_host_idx" ON "availability"."booked_intervals" USING btree ("workspace_id","host_id","blocked_to") WHERE status = 'confirmed';--> statement-breakpoint
CREATE UNIQUE INDEX "event_types_workspace_slug_uq" ON "availability"."event_types" USING btree ("workspace_id","slug");--> statement-breakpoint
CREATE INDEX "event_types_workspace_created_idx" ON "availability"."event_types" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "hosts_workspace_created_idx" ON "availability"."hosts" USING btree ("workspace_id","created_at","id");