CREATE TABLE "calendar_sync"."oauth_states" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"provider" text NOT NULL,
	"calendar_id" text,
	"verifier_sealed" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "oauth_states_expires_idx" ON "calendar_sync"."oauth_states" USING btree ("expires_at");