-- The booked-interval read (src/store/projection.queries.ts, availability_booked_overlapping) becomes a
-- range scan over blocked_from, bounded below by the longest blocked range the contract allows (72 hours,
-- schema.ts LONGEST_BLOCKED_HOURS), instead of a walk over every future Booking of the host. Longer
-- ranges are found through the second, partial index, which holds only them. The new indexes are built
-- before the old one is dropped, so reads wait only for the drop's lock at the end, not for the builds.
CREATE INDEX "booked_intervals_host_from_idx" ON "availability"."booked_intervals" USING btree ("workspace_id","host_id","blocked_from","blocked_to") WHERE status = 'confirmed';--> statement-breakpoint
CREATE INDEX "booked_intervals_host_long_idx" ON "availability"."booked_intervals" USING btree ("workspace_id","host_id","blocked_to") WHERE status = 'confirmed' AND blocked_to - blocked_from > interval '72 hours';--> statement-breakpoint
DROP INDEX "availability"."booked_intervals_host_idx";
