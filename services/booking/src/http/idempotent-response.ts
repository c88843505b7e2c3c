import type { Request, Response } from 'express';
import type { Db, DbTx } from '@sched/db';
import { parseIdempotencyKey, requestFingerprint, runIdempotent, type IdempotentOutcome, type StoredResponse } from '@sched/idempotency';
import { requestContext } from '@sched/http';
import { idempotencyKeys } from '../store/schema';

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
  opts: { savepoint?: boolean } = {},
): Promise<IdempotentOutcome> {
  const ctx = requestContext(req);
  const key = parseIdempotencyKey(ctx.idempotencyKey);
  return runIdempotent({
    db,
    table: idempotencyKeys,
    scope: { workspaceId, apiKeyId: ctx.apiKeyId, method: req.method, path: req.path },
    key,
    // No body and `{}` are the same request (cancel's body is optional).
    fingerprint: requestFingerprint(req.method, req.path, req.body ?? {}),
    requestId: ctx.requestId,
    execute: (tx) => execute(tx, { workspaceId, requestId: ctx.requestId }),
    savepoint: opts.savepoint,
  });
}

/** Sends the outcome: the stored or fresh status and body, plus `Idempotent-Replayed` on a replay. */
export function sendOutcome(res: Response, outcome: IdempotentOutcome): void {
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  res.status(outcome.status).json(outcome.body);
}
