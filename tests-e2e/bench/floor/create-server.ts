/**
 * Booking's position in the create floor (create-floor.bench.ts), with none of booking's code: a node:http
 * server that, for each request,
 * - reads the body and checks the internal credential as booking does (libs/http createCredentialVerifier,
 *   jose, audience `booking`) under INTERNAL_AUTH_KEYS; 401 when it is refused;
 * - with --availability <origin>: asks that server about the slot, sharing calls as booking does
 *   (services/booking/src/http/availability.client.ts, @sched/group-commit: per workspace and principal at most
 *   SLOT_CHECK_BATCHES_IN_FLIGHT (2) calls out, the checks asked meanwhile go together in the next, at most
 *   SLOT_CHECK_BATCH_MAX (32); a lone check at once, no timer): POST …/slot-checks with the call's checks, a
 *   fresh credential for `availability` on behalf of the caller (libs/http's signer), through undici's Pool
 *   dispatch as booking's internal client sends; the answer read and parsed; 502 unless it says bookable (the
 *   stub's static answer holds one check: its verdict is every check's);
 * - runs the create transaction: pgbench's script of it (floor/create-transaction.ts), one transaction per
 *   request, each statement prepared once per connection, through pg with a pool like booking's
 *   (libs/db createPool, 10 connections unless BENCH_FLOOR_POOL_MAX); with --group-commit, as booking commits
 *   creates instead (services/booking/src/store/create-batch.queries.ts): the creates asked while
 *   CREATE_BATCHES_IN_FLIGHT (2) calls are out go together, at most CREATE_BATCH_MAX (64), as one call of
 *   booking.create_bookings with pgbench-booking.ts's item per create (a distinct hour, key and id each);
 * - answers 201 with the stored answer's bytes (the burst's answer size).
 * Usage: node --import tsx create-server.ts <database url> <payloads.json> [--availability <origin>]; prints
 * `LISTENING <port>`. payloads.json: createFloorPayloads()'s { samples, created }.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { Pool as HttpPool, type Dispatcher } from 'undici';
import { createPool } from '@sched/db';
import { createGroupCommit } from '@sched/group-commit';
import { createCredentialSigner, createCredentialVerifier, parseInternalKeyRing, type CallerClaims, type CredentialSigner } from '@sched/http';
import { itemTemplate, statementsScript, type Samples } from '../../../services/booking/bench/pgbench-booking';
import { scriptStatements } from './create-transaction';

const databaseUrl = process.argv[2]!;
const payloads = JSON.parse(readFileSync(process.argv[3]!, 'utf8')) as { samples: Samples; created: string };
const availabilityAt = process.argv.indexOf('--availability');
const availability = availabilityAt > 0 ? process.argv[availabilityAt + 1] : undefined;
const created = Buffer.from(payloads.created);
const statements = scriptStatements(statementsScript(payloads.samples));
const pool = createPool(databaseUrl, { max: Number(process.env.BENCH_FLOOR_POOL_MAX ?? 10), applicationName: 'create-floor' });
/** As libs/http forward-client.ts: a keep-alive Pool per upstream, idle sockets closed after 30 s. */
const upstream = availability ? new HttpPool(availability, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 30_000 }) : undefined;

const groupCommit = process.argv.includes('--group-commit');
const item = itemTemplate(payloads.samples);
const HOUR_MS = 3_600_000;
const FIRST_START = Date.parse('2040-01-01T00:00:00Z');
let nextItem = 0;
/** Booking's defaults (services/booking/src/config.ts CREATE_BATCHES_IN_FLIGHT, CREATE_BATCH_MAX); each batch one call. */
const creates = createGroupCommit<string, boolean>({
  maxInFlight: 2,
  maxBatch: 64,
  run: async (items) => {
    const { rows } = await pool.query<{ item_index: number; outcome: string }>({
      name: 'booking_create_bookings',
      text: 'SELECT item_index, outcome FROM booking.create_bookings($1::jsonb, $2)',
      values: [`[${items.join(',')}]`, 'booking_outbox'],
    });
    const created = new Array<boolean>(items.length).fill(false);
    for (const r of rows) created[r.item_index] = r.outcome === 'created';
    return created;
  },
});

/** One create through the group commit: pgbench-booking.ts's item with its own number and hour. */
function groupCommitted(): Promise<boolean> {
  const n = nextItem++;
  const start = new Date(FIRST_START + n * HOUR_MS).toISOString();
  const end = new Date(FIRST_START + n * HOUR_MS + HOUR_MS / 2).toISOString();
  return creates.submit(item.replace(/@N@/g, String(n)).replace(/@START@/g, start).replace(/@END@/g, end));
}

async function createTransaction(): Promise<void> {
  const client = await pool.connect();
  try {
    let n = '';
    for (const s of statements) {
      const r = await client.query({ name: s.name, text: s.text, values: s.params > 0 ? new Array<string>(s.params).fill(n) : undefined, rowMode: 'array' });
      if (s.setsN) n = String((r.rows[0] as unknown[])[0]);
    }
    client.release();
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
    throw err;
  }
}

type CreateBody = { event_type_id?: string; start_at?: string };

/** One call at availability's position with the checks of `bodies`; resolves with whether it answered bookable. */
function slotCheckCall(signer: CredentialSigner, who: CallerClaims, bodies: CreateBody[]): Promise<boolean> {
  return signer.sign('availability', { principal: who.principal, workspaceId: who.workspaceId, apiKeyId: who.apiKeyId, scopes: who.scopes, requestId: who.requestId }).then(
    (token) =>
      new Promise<boolean>((resolve, reject) => {
        const json = JSON.stringify({ checks: bodies.map((body) => ({ event_type_id: body.event_type_id, start_at: body.start_at, request_id: who.requestId })) });
        let status = 0;
        const chunks: Buffer[] = [];
        const handler: Dispatcher.DispatchHandler = {
          onRequestStart: () => undefined,
          onResponseStart: (_c, statusCode) => {
            status = statusCode;
          },
          onResponseData: (_c, chunk) => {
            chunks.push(chunk);
          },
          onResponseEnd: () => {
            const answer = status === 200 ? (JSON.parse(Buffer.concat(chunks).toString()) as { data?: Array<{ bookable?: boolean }> }) : undefined;
            resolve(answer?.data?.[0]?.bookable === true);
          },
          onResponseError: (_c, err) => reject(err),
        };
        upstream!.dispatch(
          {
            method: 'POST',
            path: `/internal/v1/workspaces/${who.workspaceId ?? 'wsp_x'}/slot-checks`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-request-id': who.requestId, 'user-agent': 'sched-internal' },
            body: json,
          },
          handler,
        );
      }),
  );
}

async function main(): Promise<void> {
  const ring = await parseInternalKeyRing(process.env.INTERNAL_AUTH_KEYS ?? '');
  const verifier = createCredentialVerifier({ service: 'booking', ring });
  const signer = createCredentialSigner({ service: 'booking', ring });
  // Booking's defaults (services/booking/src/config.ts SLOT_CHECK_BATCHES_IN_FLIGHT, SLOT_CHECK_BATCH_MAX).
  const checks = createGroupCommit<{ who: CallerClaims; body: CreateBody }, boolean>({
    maxInFlight: 2,
    maxBatch: 32,
    laneOf: (c) => `${c.who.workspaceId ?? ''}:${c.who.principal}`,
    run: (batch) => slotCheckCall(signer, batch[0]!.who, batch.map((c) => c.body)).then((bookable) => batch.map(() => bookable)),
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        let who: CallerClaims;
        try {
          who = await verifier.verify(req.headers.authorization);
        } catch {
          res.writeHead(401, { 'content-length': 0 }).end();
          return;
        }
        try {
          if (upstream) {
            const body = JSON.parse(Buffer.concat(chunks).toString()) as CreateBody;
            if (!(await checks.submit({ who, body }))) {
              res.writeHead(502, { 'content-length': 0 }).end();
              return;
            }
          }
          if (groupCommit) {
            if (!(await groupCommitted())) throw new Error('booking.create_bookings did not create the Booking');
          } else {
            await createTransaction();
          }
          res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': created.length });
          res.end(created);
        } catch (err) {
          process.stderr.write(`create failed: ${err instanceof Error ? err.message : String(err)}\n`);
          res.writeHead(500, { 'content-length': 0 }).end();
        }
      })();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => {
    void upstream?.close();
    server.close(() => void pool.end().finally(() => process.exit(0)));
    server.closeAllConnections();
  });
}

void main();
