import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from 'express';
import { DomainError } from '@sched/contracts';
import { currentContext } from '@sched/logger';

/** What a handler knows about who is calling, as forwarded by the gateway (or set by its auth step). */
export interface RequestContext {
  requestId: string;
  workspaceId?: string;
  apiKeyId?: string;
  idempotencyKey?: string;
}

/** Headers the gateway forwards to services; services trust them only with `trustForwardedContext`. */
export const CONTEXT_HEADERS = {
  requestId: 'x-request-id',
  workspaceId: 'x-workspace-id',
  apiKeyId: 'x-api-key-id',
  idempotencyKey: 'idempotency-key',
} as const;

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const ID_BYTES = 16;
/** Random bytes for this many ids are drawn at once: one CSPRNG call per 256 requests instead of one each. */
const IDS_PER_DRAW = 256;
let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * decisions.md §1: `req_` + 128 random bits, base64url so it is safe in URLs and headers. The bits come
 * from the CSPRNG in batches (as crypto.randomUUID does); every id takes its own 16 fresh bytes.
 */
export function newRequestId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * IDS_PER_DRAW);
    idOffset = 0;
  }
  const id = `req_${idPool.toString('base64url', idOffset, idOffset + ID_BYTES)}`;
  idOffset += ID_BYTES;
  return id;
}

/** Keeps a well-formed caller id so one id follows a request through gateway and services; else makes one. */
export function resolveRequestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : newRequestId();
}

// A WeakMap rather than a field on `req`: no declaration merging on express types, nothing to leak.
const contexts = new WeakMap<Request, RequestContext>();

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * Builds the context of a new request. Workspace and key ids come from headers only when the app sits
 * behind the gateway: on the public edge a client could otherwise claim any workspace.
 */
export function initRequestContext(req: Request, trustForwarded: boolean): RequestContext {
  const ctx: RequestContext = { requestId: resolveRequestId(req.headers[CONTEXT_HEADERS.requestId]) };
  const idempotencyKey = req.headers[CONTEXT_HEADERS.idempotencyKey];
  // The raw header is kept (even if malformed) so the idempotency layer can reject it with 400.
  if (typeof idempotencyKey === 'string') ctx.idempotencyKey = idempotencyKey;
  if (trustForwarded) {
    ctx.workspaceId = headerValue(req.headers, CONTEXT_HEADERS.workspaceId);
    ctx.apiKeyId = headerValue(req.headers, CONTEXT_HEADERS.apiKeyId);
  }
  contexts.set(req, ctx);
  return ctx;
}

/** The context of a request handled by an app from createHttpApp. */
export function requestContext(req: Request): RequestContext {
  return contexts.get(req) ?? initRequestContext(req, false);
}

/**
 * For the gateway's auth step: records the authenticated workspace and key on the request, and adds the
 * workspace to the log context so every later log line of this request carries it.
 */
export function setRequestContext(req: Request, values: { workspaceId?: string; apiKeyId?: string }): RequestContext {
  const ctx = Object.assign(requestContext(req), values);
  // The store object is per request (runWithContext copies it), so mutating it affects only this request.
  if (values.workspaceId !== undefined) currentContext().workspace_id = values.workspaceId;
  return ctx;
}

/** The workspace the request acts for; every service query is scoped by it (decisions.md §3). */
export function requireWorkspace(req: Request): string {
  const { workspaceId } = requestContext(req);
  if (!workspaceId) throw new DomainError('unauthenticated');
  return workspaceId;
}

/** Headers to forward a request's context to another service with the internal client. */
export function contextHeaders(ctx: RequestContext): Record<string, string> {
  const out: Record<string, string> = { [CONTEXT_HEADERS.requestId]: ctx.requestId };
  if (ctx.workspaceId) out[CONTEXT_HEADERS.workspaceId] = ctx.workspaceId;
  if (ctx.apiKeyId) out[CONTEXT_HEADERS.apiKeyId] = ctx.apiKeyId;
  if (ctx.idempotencyKey !== undefined) out[CONTEXT_HEADERS.idempotencyKey] = ctx.idempotencyKey;
  return out;
}
