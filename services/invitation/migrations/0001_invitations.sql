CREATE TABLE "invitation"."idempotency_keys" (
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
CREATE TABLE "invitation"."invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"event_type_id" text NOT NULL,
	"email" text,
	"not_before" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"max_uses" integer NOT NULL,
	"used_count" integer DEFAULT 0 NOT NULL,
	"metadata" jsonb NOT NULL,
	"credential_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "invitations_used_count_bounds" CHECK ("invitation"."invitations"."used_count" >= 0 AND "invitation"."invitations"."used_count" <= "invitation"."invitations"."max_uses")
);
--> statement-breakpoint
CREATE TABLE "invitation"."use_reservations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"invitation_id" text NOT NULL,
	"status" text NOT NULL,
	"start_at" timestamp (3) with time zone NOT NULL,
	"guest_email" text NOT NULL,
	"booking_id" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"settled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "invitation"."idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_credential_hash_idx" ON "invitation"."invitations" USING btree ("credential_hash");--> statement-breakpoint
CREATE INDEX "invitations_list_idx" ON "invitation"."invitations" USING btree ("workspace_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "use_reservations_invitation_idx" ON "invitation"."use_reservations" USING btree ("workspace_id","invitation_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "use_reservations_booking_idx" ON "invitation"."use_reservations" USING btree ("booking_id");