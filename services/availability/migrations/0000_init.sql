CREATE SCHEMA IF NOT EXISTS "availability";
--> statement-breakpoint
CREATE TABLE "availability"."inbox" (
	"event_id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
