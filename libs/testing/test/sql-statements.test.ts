import { escapeLiteral } from 'pg';
import { statementsIn } from '../src';

/**
 * statementsIn, on the texts the two benches that use it really count: libs/messaging's count.bench.ts
 * (the consumer's drizzle statements, the outbox relay's PREPARE / BEGIN / EXECUTE / COMMIT rounds) and
 * services/calendar-sync's write-probe.ts (the message transaction's prepared claim and record, with the
 * Booking as a quoted JSON literal).
 */
describe('statementsIn', () => {
  it('an extended-protocol text (bind parameters) is one statement, trimmed', () => {
    expect(statementsIn('insert into "cons_10_s"."effects" ("event_id", "note") values ($1, $2)')).toEqual(['insert into "cons_10_s"."effects" ("event_id", "note") values ($1, $2)']);
    expect(statementsIn('  select "id" from "booking"."bookings" where "id" = $1 for update\n')).toEqual(['select "id" from "booking"."bookings" where "id" = $1 for update']);
  });

  it('a lone BEGIN or COMMIT, with or without its semicolon', () => {
    expect(statementsIn('BEGIN')).toEqual(['BEGIN']);
    expect(statementsIn('COMMIT;')).toEqual(['COMMIT']);
  });

  it('the relay’s first round on a connection: its PREPAREs, BEGIN and the claim in one simple-protocol text', () => {
    const text =
      'PREPARE sched_outbox_aa(text[]) AS SELECT id, payload FROM "relay_0"."outbox" WHERE id = ANY($1) AND published_at IS NULL ORDER BY created_at FOR UPDATE SKIP LOCKED; ' +
      'PREPARE sched_outbox_bb AS SELECT id, payload FROM "relay_0"."outbox" WHERE published_at IS NULL ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED; ' +
      'PREPARE sched_outbox_cc(text[]) AS UPDATE "relay_0"."outbox" SET published_at = now() WHERE id = ANY($1); ' +
      "BEGIN; EXECUTE sched_outbox_aa(ARRAY['evt_1', 'evt_2']::text[])";
    expect(statementsIn(text)).toEqual([
      'PREPARE sched_outbox_aa(text[]) AS SELECT id, payload FROM "relay_0"."outbox" WHERE id = ANY($1) AND published_at IS NULL ORDER BY created_at FOR UPDATE SKIP LOCKED',
      'PREPARE sched_outbox_bb AS SELECT id, payload FROM "relay_0"."outbox" WHERE published_at IS NULL ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED',
      'PREPARE sched_outbox_cc(text[]) AS UPDATE "relay_0"."outbox" SET published_at = now() WHERE id = ANY($1)',
      'BEGIN',
      "EXECUTE sched_outbox_aa(ARRAY['evt_1', 'evt_2']::text[])",
    ]);
  });

  it('the relay’s marking round: EXECUTE, SET LOCAL and COMMIT', () => {
    expect(statementsIn("EXECUTE sched_outbox_cc(ARRAY['evt_1']::text[]); SET LOCAL synchronous_commit = off; COMMIT")).toEqual([
      "EXECUTE sched_outbox_cc(ARRAY['evt_1']::text[])",
      'SET LOCAL synchronous_commit = off',
      'COMMIT',
    ]);
  });

  it('semicolons inside quoted literals stay in their statement, quotes doubled by pg’s escapeLiteral included', () => {
    const booking = escapeLiteral(JSON.stringify({ guest: { name: "O'Brien; Ada", email: 'a@example.com' }, metadata: { note: "it's; fine" } }));
    const claim = `EXECUTE calendar_sync_claim_message('evt_1', 'booking.created', 'wsp_1', 'bkg_1', 'hst_1', ${booking}, 1, 'bkg_1@sched')`;
    expect(statementsIn(`BEGIN; ${claim}`)).toEqual(['BEGIN', claim]);
    const record = `EXECUTE calendar_sync_record_result('bkg_1', 'wsp_1', 1, 'synced', NULL, ${escapeLiteral('https://dav.example.com/a;b.ics')}, '"etag;1"')`;
    expect(statementsIn(`${record}; SET LOCAL synchronous_commit = off; COMMIT`)).toEqual([record, 'SET LOCAL synchronous_commit = off', 'COMMIT']);
  });

  it('a literal holding a backslash (escapeLiteral writes E\'…\') stays whole', () => {
    const lit = escapeLiteral('C:\\path; with\\backslash');
    expect(lit.trim().startsWith('E')).toBe(true);
    expect(statementsIn(`SELECT ${lit}; COMMIT`)).toEqual([`SELECT ${lit}`, 'COMMIT']);
  });

  it('empty statements (doubled or trailing semicolons, blank text) are not counted', () => {
    expect(statementsIn('BEGIN;; ;COMMIT; ')).toEqual(['BEGIN', 'COMMIT']);
    expect(statementsIn('')).toEqual([]);
    expect(statementsIn('  \n ')).toEqual([]);
  });
});
