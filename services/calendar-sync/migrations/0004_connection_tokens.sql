CREATE TABLE "calendar_sync"."connection_tokens" (
	"connection_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"host_id" text NOT NULL,
	"access_token_sealed" text,
	"access_token_expires_at" timestamp with time zone,
	"refresh_token_sealed" text,
	"refreshed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "calendar_sync"."connection_tokens" ADD CONSTRAINT "connection_tokens_connection_id_calendar_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "calendar_sync"."calendar_connections"("id") ON DELETE cascade ON UPDATE no action;