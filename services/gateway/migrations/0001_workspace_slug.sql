ALTER TABLE "gateway"."workspaces" ADD COLUMN "slug" text;--> statement-breakpoint
-- Workspaces made before slugs existed get one from their id, so the column can be NOT NULL.
UPDATE "gateway"."workspaces" SET "slug" = 'ws-' || lower(regexp_replace(substr("id", 5), '[^A-Za-z0-9]', 'x', 'g')) WHERE "slug" IS NULL;--> statement-breakpoint
ALTER TABLE "gateway"."workspaces" ALTER COLUMN "slug" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "gateway"."workspaces" ADD CONSTRAINT "workspaces_slug_unique" UNIQUE("slug");
