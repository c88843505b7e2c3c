CREATE INDEX "deliveries_succeeded_idx" ON "webhook_dispatch"."deliveries" USING btree ("succeeded_at") WHERE status = 'succeeded';--> statement-breakpoint
CREATE INDEX "deliveries_failed_idx" ON "webhook_dispatch"."deliveries" USING btree ("failed_at") WHERE status = 'failed';--> statement-breakpoint
CREATE INDEX "inbox_received_idx" ON "webhook_dispatch"."inbox" USING btree ("received_at");