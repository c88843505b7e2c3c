import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { Db, DbTx } from '@sched/db';
import { idempotencyRowIdentity, parseIdempotencyKey, requestFingerprint, runIdempotent, type IdempotentOutcome, type StoredResponse } from '@sched/idempotency';
import { JSON_UTF8, requestContext, sendJson, sendText, type FastRequest } from '@sched/http';
import type { CreateKey } from '../domain/ports';
import { idempotencyKeys } from '../store/schema';

/**
 * The request's path as express's `req.path` gives it (the URL's path, not decoded, without the query). The
 * routes run on the fast path too, where express has not handled the request: its `path` getter is there
 * all the same, as every request of a createHttpApp server is born with express's request prototype (libs/http
 * express-messages.ts), and reads only node's `url`.
 */
function pathOf(req: FastRequest): string {
  return (req as FastRequest & Pick<Request, 'path'>).path;
}

/** The scope of a request's key (decisions.md §4): workspace, API key, method, path. */
function scopeOf(req: FastRequest, workspaceId: string, apiKeyId: string | undefined) {
  return { workspaceId, apiKeyId, method: req.method!, path: pathOf(req) };
}

/** decisions.md §4: method, path and body (no body and `{}` are the same request: cancel's body is optional). */
function fingerprintOf(req: FastRequest): string {
  return requestFingerprint(req.method!, pathOf(req), req.body ?? {});
}

/**
 * What decisions.md §4 keys a request by: its validated Idempotency-Key (undefined without one), the scope
 * (workspace, API key, method, path) and the fingerprint. Shared by runIdempotent's mutations and the
 * create, so all key a request alike.
 */
export function idempotentRequest(req: FastRequest, workspaceId: string) {
  const ctx = requestContext(req);
  return {
    key: parseIdempotencyKey(ctx.idempotencyKey),
    scope: scopeOf(req, workspaceId, ctx.apiKeyId),
    fingerprint: fingerprintOf(req),
    requestId: ctx.requestId,
  };
}

/**
 * A create's key (domain CreateKey): its row identity and fingerprint, or undefined without the header (400
 * when malformed). Without a key nothing is worked out (no fingerprint: nothing would compare it).
 */
export function createKey(req: FastRequest, workspaceId: string): CreateKey | undefined {
  const ctx = requestContext(req);
  const key = parseIdempotencyKey(ctx.idempotencyKey);
  if (key === undefined) return undefined;
  const { id, lockKey } = idempotencyRowIdentity(idempotencyKeys, scopeOf(req, workspaceId, ctx.apiKeyId), key);
  return { id, lockKey, fingerprint: fingerprintOf(req) };
}

/**
 * Runs a mutation under the request's Idempotency-Key (decisions.md §4) in one transaction with its key row
 * and outbox events, for the workspace the route acts for (forwarded by the gateway, or in an internal
 * path). `execute` answers `{status, body}`; a thrown 4xx DomainError is stored and answered,
 * anything else propagates to the error middleware (and is not stored). The header is validated first.
 */
export async function idempotentMutation(
  req: Request,
  db: Db,
  workspaceId: string,
  execute: (tx: DbTx, ctx: { workspaceId: string; requestId: string }) => Promise<StoredResponse>,
): Promise<IdempotentOutcome> {
  const request = idempotentRequest(req, workspaceId);
  return runIdempotent({
    db,
    table: idempotencyKeys,
    ...request,
    execute: (tx) => execute(tx, { workspaceId, requestId: request.requestId }),
  });
}

/** Sends the outcome: the stored or fresh status and body, plus `Idempotent-Replayed` on a replay (sendJson: express's res.json). */
export function sendOutcome(res: ServerResponse, outcome: StoredResponse & { headers: Record<string, string> }): void {
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  sendJson(res, outcome.status, outcome.body);
}

/** A JSON body stored as text, sent as it is: the bytes res.json of its parsed value would send, without the round trip. */
export function sendStoredJson(res: ServerResponse, status: number, body: string): void {
  res.setHeader('Content-Type', JSON_UTF8);
  sendText(res, status, body);
}
