CREATE SCHEMA IF NOT EXISTS "webhook_dispatch";
--> statement-breakpoint
CREATE TABLE "webhook_dispatch"."inbox" (
	"event_id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
