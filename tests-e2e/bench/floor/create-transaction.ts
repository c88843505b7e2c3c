/**
 * The create floor's transaction (create-floor.bench.ts): the pgbench script of the create
 * (services/booking/bench/pgbench-booking.ts statementsScript, one Booking per transaction) as the
 * statements a pg client sends, as pgbench -M prepared sends them: each line one prepared statement, each
 * occurrence of the variable `:n` its own parameter ($1, $2, … in order, all given n), and the line ending in
 * `\gset` the one whose result sets n. Also the payloads the script stores and the answers the floor's
 * servers give, of a create of the burst's shape. Pure (no I/O): unit-tested in tests-e2e/test/bench-floors.e2e.ts.
 */
import { makeEvent, type Booking } from '@sched/contracts';
import type { Samples } from '../../../services/booking/bench/pgbench-booking';

/** One statement of the transaction: a name to prepare it under, its text, and how many parameters (each given n). */
export interface FloorStatement {
  name: string;
  text: string;
  params: number;
  /** The statement whose first column of its one row is n for the statements after it (pgbench's `\gset`). */
  setsN: boolean;
}

/** `:n` as pgbench reads a variable: a colon not part of `::`, the name, not followed by more of a name. */
const VARIABLE = /(?<!:):n(?![A-Za-z0-9_])/g;

/** The statements of a pgbench script (one per non-empty line), named `${prefix}_<k>`. */
export function scriptStatements(script: string, prefix = 'floor_create'): FloorStatement[] {
  const lines = script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return lines.map((line, k) => {
    const setsN = line.endsWith('\\gset');
    if (line.startsWith('\\')) throw new Error(`a pgbench meta-command the floor does not run: ${line.slice(0, 40)}`);
    let text = setsN ? line.slice(0, -'\\gset'.length).trim() : line;
    if (text.endsWith(';')) text = text.slice(0, -1);
    let params = 0;
    text = text.replace(VARIABLE, () => `$${++params}`);
    return { name: `${prefix}_${k}`, text, params, setsN };
  });
}

const EVT = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const HST = 'hst_AAAAAAAAAAAAAAAAAAAAAA';

/** A Booking as the burst's create answers it (api-v1.md's fields in booking's order; the burst's body: guest, metadata; a phone Event Type). */
export function sampleBooking(i: number, startAt: string, endAt: string): Booking {
  return {
    id: `bkg_${String(i).padStart(22, '0')}`,
    status: 'confirmed',
    version: 1,
    source: 'api',
    event_type_id: EVT,
    host_id: HST,
    start_at: startAt,
    end_at: endAt,
    guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'Europe/London' },
    meeting: { type: 'phone', join_url: null },
    calendar: { status: 'pending', error_code: null },
    metadata: { order: `o-${i}`, channel: 'bench' },
    created_at: '2026-11-26T12:00:00.000Z',
    rescheduled_at: null,
    cancelled_at: null,
  } as Booking;
}

/**
 * What the floor stores and answers for a create: the samples pgbench's script stores (outbox payload: the
 * booking.created message; the key's stored answer; the metadata), the 201 body (the stored answer's bytes,
 * as booking answers a create) and availability's answer to one slot check.
 */
export function createFloorPayloads(): { samples: Samples; created: string; slotCheckAnswer: string } {
  const startAt = '2026-12-01T09:00:00.000Z';
  const endAt = '2026-12-01T09:05:00.000Z';
  const booking = sampleBooking(1234, startAt, endAt);
  const created = JSON.stringify({ data: booking, meta: { request_id: 'req_0123456789abcdefghijklmnopqrstuv' } });
  const event = makeEvent('booking.created', {
    workspaceId: 'wsp_0123456789abcdefghij',
    occurredAt: new Date('2026-11-26T12:00:00.000Z'),
    data: { booking, internal: { blocked_from: startAt, blocked_to: endAt, invitation_id: null } },
  });
  const slotCheck = { bookable: true, event_type_id: EVT, host_id: HST, start_at: startAt, end_at: endAt, blocked_from: startAt, blocked_to: endAt, meeting_type: 'phone' };
  return {
    samples: { outboxPayload: JSON.stringify(event), storedResponse: created, metadata: JSON.stringify(booking.metadata) },
    created,
    slotCheckAnswer: JSON.stringify({ data: [slotCheck], meta: { request_id: 'req_0123456789abcdefghijklmnopqrstuv' } }),
  };
}
