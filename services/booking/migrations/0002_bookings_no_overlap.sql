-- decisions.md §6: no two confirmed Bookings of one host overlap, buffers included, enforced by the
-- database itself so that two creates that both passed the availability check cannot both commit.
-- Half-open ranges: a Booking blocked until 10:00 and one blocked from 10:00 do not overlap.
-- `host_id WITH =` in a GiST index needs btree_gist (installed by the admin in schema public).
ALTER TABLE "booking"."bookings"
  ADD CONSTRAINT "bookings_no_overlap"
  EXCLUDE USING gist ("host_id" WITH =, tstzrange("blocked_from", "blocked_to", '[)') WITH &&)
  WHERE ("status" = 'confirmed');
--> statement-breakpoint
ALTER TABLE "booking"."bookings"
  ADD CONSTRAINT "bookings_status_check" CHECK ("status" IN ('confirmed', 'cancelled')),
  ADD CONSTRAINT "bookings_version_check" CHECK ("version" >= 1),
  ADD CONSTRAINT "bookings_range_check" CHECK ("start_at" < "end_at" AND "blocked_from" <= "start_at" AND "end_at" <= "blocked_to"),
  ADD CONSTRAINT "bookings_calendar_status_check" CHECK ("calendar_status" IN ('pending', 'synced', 'failed'));
