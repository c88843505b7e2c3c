CREATE TABLE "webhook_dispatch"."attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"number" integer NOT NULL,
	"attempted_at" timestamp (3) with time zone NOT NULL,
	"status_code" integer,
	"latency_ms" integer NOT NULL,
	"error_kind" text,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "webhook_dispatch"."deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"round_attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"locked_until" timestamp (3) with time zone,
	"claim_token" text,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"dead_letter_count" integer DEFAULT 0 NOT NULL,
	"dead_letter_pending" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"succeeded_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone,
	CONSTRAINT "deliveries_status_check" CHECK (status IN ('pending', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_dispatch"."endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"secret_sealed" text NOT NULL,
	"previous_secret_sealed" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_dispatch"."attempts" ADD CONSTRAINT "attempts_delivery_id_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "webhook_dispatch"."deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_dispatch"."deliveries" ADD CONSTRAINT "deliveries_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_dispatch"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attempts_delivery_idx" ON "webhook_dispatch"."attempts" USING btree ("delivery_id","number");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_endpoint_event_idx" ON "webhook_dispatch"."deliveries" USING btree ("endpoint_id","event_id");--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "webhook_dispatch"."deliveries" USING btree ("endpoint_id","next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "deliveries_dead_letter_pending_idx" ON "webhook_dispatch"."deliveries" USING btree ("id") WHERE dead_letter_pending;--> statement-breakpoint
CREATE INDEX "deliveries_list_idx" ON "webhook_dispatch"."deliveries" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "deliveries_endpoint_list_idx" ON "webhook_dispatch"."deliveries" USING btree ("workspace_id","endpoint_id","created_at","id");--> statement-breakpoint
CREATE INDEX "endpoints_workspace_idx" ON "webhook_dispatch"."endpoints" USING btree ("workspace_id","created_at","id");