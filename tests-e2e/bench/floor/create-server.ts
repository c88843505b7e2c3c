/**
 * Booking's position in the create floor (create-floor.bench.ts), with none of booking's code: a node:http
 * server that, for each request,
 * - reads the body and checks the internal credential as booking does (libs/http createCredentialVerifier,
 *   jose, audience `booking`) under INTERNAL_AUTH_KEYS; 401 when it is refused;
 * - with --availability <origin>: asks that server about the slot, one call per create (booking shares
 *   concurrent checks in one call, so this is an upper bound): POST …/slot-checks with the one check, a fresh
 *   credential for `availability` on behalf of the same caller (libs/http's signer), through undici's Pool
 *   dispatch as booking's internal client sends; the answer read and parsed; 502 unless it says bookable;
 * - runs the create transaction: pgbench's script of it (floor/create-transaction.ts), one transaction per
 *   request, each statement prepared once per connection, through pg with a pool like booking's
 *   (libs/db createPool, 10 connections unless BENCH_FLOOR_POOL_MAX);
 * - answers 201 with the stored answer's bytes (the burst's answer size).
 * Usage: node --import tsx create-server.ts <database url> <payloads.json> [--availability <origin>]; prints
 * `LISTENING <port>`. payloads.json: createFloorPayloads()'s { samples, created }.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { Pool as HttpPool, type Dispatcher } from 'undici';
import { createPool } from '@sched/db';
import { createCredentialSigner, createCredentialVerifier, parseInternalKeyRing, type CallerClaims, type CredentialSigner } from '@sched/http';
import { statementsScript, type Samples } from '../../../services/booking/bench/pgbench-booking';
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

/** One slot check at availability's position; resolves with whether it answered bookable. */
function slotCheck(signer: CredentialSigner, who: CallerClaims, body: { event_type_id?: string; start_at?: string }): Promise<boolean> {
  return signer.sign('availability', { principal: who.principal, workspaceId: who.workspaceId, apiKeyId: who.apiKeyId, scopes: who.scopes, requestId: who.requestId }).then(
    (token) =>
      new Promise<boolean>((resolve, reject) => {
        const json = JSON.stringify({ checks: [{ event_type_id: body.event_type_id, start_at: body.start_at, request_id: who.requestId }] });
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
            const body = JSON.parse(Buffer.concat(chunks).toString()) as { event_type_id?: string; start_at?: string };
            if (!(await slotCheck(signer, who, body))) {
              res.writeHead(502, { 'content-length': 0 }).end();
              return;
            }
          }
          await createTransaction();
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
