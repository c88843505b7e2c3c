CREATE TABLE "booking"."bookings" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"status" text NOT NULL,
	"version" integer NOT NULL,
	"source" text NOT NULL,
	"invitation_id" text,
	"event_type_id" text NOT NULL,
	"host_id" text NOT NULL,
	"start_at" timestamp (3) with time zone NOT NULL,
	"end_at" timestamp (3) with time zone NOT NULL,
	"blocked_from" timestamp (3) with time zone NOT NULL,
	"blocked_to" timestamp (3) with time zone NOT NULL,
	"guest_name" text NOT NULL,
	"guest_email" text NOT NULL,
	"guest_timezone" text NOT NULL,
	"meeting_type" text NOT NULL,
	"join_url" text,
	"calendar_status" text NOT NULL,
	"calendar_error_code" text,
	"calendar_written_at" timestamp (3) with time zone,
	"metadata" json NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"rescheduled_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "booking"."idempotency_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" text NOT NULL,
	"sealed" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "bookings_workspace_start_idx" ON "booking"."bookings" USING btree ("workspace_id","start_at","id");--> statement-breakpoint
CREATE INDEX "bookings_workspace_event_type_start_idx" ON "booking"."bookings" USING btree ("workspace_id","event_type_id","start_at","id");--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "booking"."idempotency_keys" USING btree ("expires_at");