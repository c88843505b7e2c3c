import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startSystem, type System, type SystemOptions } from '../support/system';
import { startReceiver, setUpTenant, type Tenant, type TenantOptions } from '../support/tenant';
import { startPrivatePostgres, startPrivateRabbit, usePrivateInfra, type PrivateServer } from '../support/private-infra';

/**
 * What every resilience scenario shares: a whole system on its own PostgreSQL and RabbitMQ (which the
 * scenarios may stop), a tenant, a load generator that records every answer, and the figures file.
 */

/** Fast retry schedules, so recoveries happen within the run (the defaults wait minutes to hours). */
export const FAST_RETRIES: Record<string, string> = {
  CALENDAR_WRITE_RETRY_DELAYS_MS: '200,500,1000,2000,2000,3000,3000,5000,5000,5000',
  WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,2000,3000,5000,5000',
};

export interface Rig {
  sys: System;
  pg: PrivateServer;
  rabbit: PrivateServer;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  t: Tenant;
  close(): Promise<void>;
}

/** `tenant`: how the tenant is set up (e.g. its host's calendar connected through OAuth instead of Radicale). */
export async function startRig({ tenant, ...opts }: SystemOptions & { tenant?: TenantOptions } = {}): Promise<Rig> {
  const pg = await startPrivatePostgres();
  let rabbit: PrivateServer | undefined;
  let sys: System | undefined;
  let receiver: Rig['receiver'] | undefined;
  const close = async () => {
    await receiver?.close().catch(() => undefined);
    await sys?.stop().catch(() => undefined);
    await rabbit?.close();
    await pg.close();
  };
  try {
    rabbit = await startPrivateRabbit();
    usePrivateInfra(pg, rabbit);
    sys = await startSystem({ ...opts, env: { ...FAST_RETRIES, ...opts.env } });
    receiver = await startReceiver();
    const t = await setUpTenant(sys, receiver, tenant);
    return { sys, pg, rabbit, receiver, t, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** `n` free slot starts of the tenant's 30-minute Event Type, from tomorrow on (48 a day, all-day schedule). */
export async function manyStarts(t: Tenant, n: number, fromDay = 1): Promise<string[]> {
  const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);
  const days = Math.ceil(n / 48) + 2;
  const slots = await t.client.eventTypes.slots(t.eventTypeId, { from: day(fromDay), to: day(fromDay + days), timezone: 'UTC' });
  if (slots.length < n) throw new Error(`only ${slots.length} free slots`);
  return slots.slice(0, n).map((s) => s.start_at);
}

export interface Outcome {
  start: string;
  status: number;
  /** 0 when the request got no answer within the client's bound (a hang). */
  bookingId?: string;
  code?: string;
  /** The answer carried the error envelope (decisions.md §2). */
  envelope: boolean;
  /** The answer body looked like a stack trace or raw error text. */
  leak: boolean;
  /** The Retry-After header, when the answer had one. */
  retryAfter?: string;
  ms: number;
  sentAt: number;
}

const STACK = /\n\s+at |Error: .*\n|node:internal|\.ts:\d+:\d+|\.js:\d+:\d+/;

/** One POST /v1/bookings, never throwing: the answer (or the hang) is what the scenarios judge. */
export async function createBooking(rig: Rig, start: string, i: number, timeoutMs = 20_000): Promise<Outcome> {
  const sentAt = Date.now();
  try {
    const res = await fetch(`${rig.sys.gatewayUrl}/v1/bookings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_type_id: rig.t.eventTypeId, start_at: start, guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'UTC' } }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: { data?: { id?: string }; error?: { code?: string; message?: string } } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      /* judged below: not the envelope */
    }
    return {
      start,
      status: res.status,
      bookingId: res.status === 201 ? json.data?.id : undefined,
      code: json.error?.code,
      envelope: typeof json.error?.code === 'string' && typeof json.error?.message === 'string',
      leak: STACK.test(text),
      retryAfter: res.headers.get('retry-after') ?? undefined,
      ms: Date.now() - sentAt,
      sentAt,
    };
  } catch {
    return { start, status: 0, envelope: false, leak: false, ms: Date.now() - sentAt, sentAt };
  }
}

export interface LoadOptions {
  concurrency: number;
  /** An answer for which the start goes back into the queue (a client retrying a 503), after `retryPauseMs`. */
  retryIf?: (o: Outcome) => boolean;
  retryPauseMs?: number;
  /** Sees every answer as it comes, with the count of answers so far. */
  onEach?: (o: Outcome, answers: number) => void | Promise<void>;
}

/**
 * Books every start once (with `concurrency` in flight), retrying the answers `retryIf` picks.
 * Returns every attempt in answer order; the 201s carry the Booking ids.
 */
export async function createMany(rig: Rig, starts: string[], opts: LoadOptions): Promise<Outcome[]> {
  const queue = starts.map((start, i) => ({ start, i }));
  const out: Outcome[] = [];
  let inFlight = 0;
  const worker = async () => {
    for (;;) {
      const job = queue.shift();
      if (!job) {
        // Another worker's answer may still put its start back.
        if (inFlight === 0) return;
        await sleep(20);
        continue;
      }
      inFlight++;
      const o = await createBooking(rig, job.start, job.i);
      out.push(o);
      await opts.onEach?.(o, out.length);
      if (opts.retryIf?.(o)) {
        await sleep(opts.retryPauseMs ?? 200);
        queue.push(job);
      }
      inFlight--;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return out;
}

export function summarize(outcomes: Outcome[]): Record<string, number> {
  const by: Record<string, number> = {};
  for (const o of outcomes) by[o.status === 0 ? 'no_answer' : String(o.status)] = (by[o.status === 0 ? 'no_answer' : String(o.status)] ?? 0) + 1;
  return by;
}

/** Booking rows as stored (booking schema), by id. */
export async function bookingRows(rig: Rig): Promise<Map<string, Record<string, unknown>>> {
  const { rows } = await rig.sys.db.adminPool.query<Record<string, unknown>>('SELECT * FROM booking.bookings WHERE workspace_id = $1', [rig.t.workspaceId]);
  return new Map(rows.map((r) => [r.id as string, r]));
}

/** booking.created outbox rows per booking id (published or not). */
export async function createdEventsByBooking(rig: Rig): Promise<Map<string, number>> {
  const { rows } = await rig.sys.db.adminPool.query<{ bid: string; n: string }>(
    `SELECT payload->'data'->'booking'->>'id' AS bid, count(*) AS n FROM booking.outbox WHERE type = 'booking.created' AND workspace_id = $1 GROUP BY 1`,
    [rig.t.workspaceId],
  );
  return new Map(rows.map((r) => [r.bid, Number(r.n)]));
}

/** .ics objects in the tenant's Radicale calendar, counted per Booking id. */
export async function calendarObjectsPerBooking(rig: Rig, ids: string[]): Promise<Map<string, number>> {
  const files = await rig.sys.radicale.listObjects(rig.t.calendarUser, rig.t.calendarName);
  const counts = new Map(ids.map((id) => [id, 0]));
  for (const f of files) for (const id of ids) if (f.includes(id)) counts.set(id, counts.get(id)! + 1);
  return counts;
}

/** Webhooks of one type at the receiver: raw deliveries, and distinct webhook-ids per Booking. */
export function webhookCounts(rig: Rig, type: string): { raw: number; distinctIds: number; idsPerBooking: Map<string, Set<string>> } {
  const hits = rig.receiver.received.filter((w) => w.type === type);
  const idsPerBooking = new Map<string, Set<string>>();
  for (const w of hits) {
    if (!w.bookingId) continue;
    const set = idsPerBooking.get(w.bookingId) ?? new Set<string>();
    set.add(w.id);
    idsPerBooking.set(w.bookingId, set);
  }
  return { raw: hits.length, distinctIds: new Set(hits.map((w) => w.id)).size, idsPerBooking };
}

export const FIGURES_FILE = path.join(ROOT, '.data', 'resilience.json');

/** Merges one scenario's figures into .data/resilience.json (test files run one at a time). */
export function recordScenario(name: string, figures: Record<string, unknown>): void {
  mkdirSync(path.dirname(FIGURES_FILE), { recursive: true });
  const current = existsSync(FIGURES_FILE) ? (JSON.parse(readFileSync(FIGURES_FILE, 'utf8')) as { scenarios?: Record<string, unknown> }) : {};
  const scenarios = { ...current.scenarios, [name]: { ...figures, recordedAt: new Date().toISOString() } };
  writeFileSync(FIGURES_FILE, JSON.stringify({ ...current, generatedAt: new Date().toISOString(), scenarios }, null, 2) + '\n');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
