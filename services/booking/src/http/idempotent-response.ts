import type { Request, Response } from 'express';
import type { Db, DbTx } from '@sched/db';
import { idempotencyRowIdentity, parseIdempotencyKey, requestFingerprint, runIdempotent, type IdempotentOutcome, type StoredResponse } from '@sched/idempotency';
import { JSON_UTF8, requestContext, sendText } from '@sched/http';
import type { CreateKey } from '../domain/ports';
import { idempotencyKeys } from '../store/schema';

/**
 * What decisions.md §4 keys a request by: its validated Idempotency-Key (undefined without one), the scope
 * (workspace, API key, method, path) and the fingerprint (no body and `{}` are the same request: cancel's
 * body is optional). Shared by runIdempotent's mutations and the create, so all key a request alike.
 */
export function idempotentRequest(req: Request, workspaceId: string) {
  const ctx = requestContext(req);
  return {
    key: parseIdempotencyKey(ctx.idempotencyKey),
    scope: { workspaceId, apiKeyId: ctx.apiKeyId, method: req.method, path: req.path },
    fingerprint: requestFingerprint(req.method, req.path, req.body ?? {}),
    requestId: ctx.requestId,
  };
}

/** A create's key (domain CreateKey): its row identity and fingerprint, or undefined without the header (400 when malformed). */
export function createKey(req: Request, workspaceId: string): CreateKey | undefined {
  const { key, scope, fingerprint } = idempotentRequest(req, workspaceId);
  if (key === undefined) return undefined;
  const { id, lockKey } = idempotencyRowIdentity(idempotencyKeys, scope, key);
  return { id, lockKey, fingerprint };
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

/** Sends the outcome: the stored or fresh status and body, plus `Idempotent-Replayed` on a replay. */
export function sendOutcome(res: Response, outcome: StoredResponse & { headers: Record<string, string> }): void {
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  res.status(outcome.status).json(outcome.body);
}

/** A JSON body stored as text, sent as it is: the bytes res.json of its parsed value would send, without the round trip. */
export function sendStoredJson(res: Response, status: number, body: string): void {
  res.setHeader('Content-Type', JSON_UTF8);
  sendText(res, status, body);
}
