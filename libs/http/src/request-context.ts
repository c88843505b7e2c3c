import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DomainError } from '@sched/contracts';
import { currentContext, runWithContext, type LogContext } from '@sched/logger';
import type { CallerClaims, OnBehalfOf, PrincipalKind } from './internal-credential';

/**
 * What a handler knows about who is calling. At the gateway its auth step sets it; in a service it
 * comes from the verified internal credential (`caller`) and from nothing else.
 */
export interface RequestContext {
  requestId: string;
  workspaceId?: string;
  apiKeyId?: string;
  idempotencyKey?: string;
  /** On whose behalf the request acts (set by the gateway's auth, or from the credential). */
  principal?: PrincipalKind;
  /** The API key's scopes (principal `api_key`). */
  scopes?: readonly string[];
  /** The invitation a booking page visitor holds, once the invitation service has resolved it. */
  invitationId?: string;
  /** In a service: the verified credential of this request. */
  caller?: CallerClaims;
}

/** Headers that travel beside the credential: the request id (tracing) and the client's Idempotency-Key. */
export const CONTEXT_HEADERS = {
  requestId: 'x-request-id',
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

/**
 * Each request's context, on the request under a symbol of this module: no other code can name it,
 * no declaration merging on node's or express's types, and it goes with the request (a WeakMap of
 * requests measured about 0.7 µs per request: an ephemeron entry made for every one).
 */
const CONTEXT = Symbol('sched.requestContext');
type WithContext = IncomingMessage & { [CONTEXT]?: RequestContext };
/**
 * The context of the request being handled, for the internal clients its handlers call (onBehalfOf),
 * rides in the logger's async context under a symbol: runWithContext copies the store with its symbol
 * keys (object spread), log lines take only its string keys (redact copies Object.entries), and one
 * AsyncLocalStorage serves both. A second one would cost every promise and callback of every request
 * a second copy of its store (node's async hook propagates each storage: about 60 ns each, micro loop).
 */
const RUNNING = Symbol('sched.requestContext');
type CarriesRequest = LogContext & { [RUNNING]?: RequestContext };

/**
 * Builds the context of a new request: its request id and Idempotency-Key. Who is calling is not read
 * from headers: the gateway's auth step or a verified credential sets it (applyCredential).
 */
export function initRequestContext(req: IncomingMessage): RequestContext {
  const ctx: RequestContext = { requestId: resolveRequestId(req.headers[CONTEXT_HEADERS.requestId]) };
  const idempotencyKey = req.headers[CONTEXT_HEADERS.idempotencyKey];
  // The raw header is kept (even if malformed) so the idempotency layer can reject it with 400.
  if (typeof idempotencyKey === 'string') ctx.idempotencyKey = idempotencyKey;
  (req as WithContext)[CONTEXT] = ctx;
  return ctx;
}

/** A verified credential becomes the request's context: its request id, workspace, key and principal. */
export function applyCredential(ctx: RequestContext, claims: CallerClaims): void {
  ctx.caller = claims;
  ctx.requestId = claims.requestId;
  ctx.principal = claims.principal;
  ctx.workspaceId = claims.workspaceId;
  ctx.apiKeyId = claims.apiKeyId;
  ctx.scopes = claims.scopes;
  ctx.invitationId = claims.invitationId;
}

/** Runs the rest of a request with its context current (for onBehalfOf) and `log` added to the log context. */
export function runWithRequestContext<T>(ctx: RequestContext, log: LogContext, fn: () => T): T {
  const store: CarriesRequest = { ...log, [RUNNING]: ctx };
  return runWithContext(store, fn);
}

/**
 * On whose behalf an internal call made now acts: the request being handled (its principal, key,
 * scopes, request id), or, outside any request (a consumer, a job), the service itself. `workspaceId`
 * names the workspace the call is for when the request has none (or there is no request).
 */
export function onBehalfOf(overrides: Partial<OnBehalfOf> = {}): OnBehalfOf {
  return onBehalfOfContext((currentContext() as CarriesRequest)[RUNNING], overrides);
}

/**
 * onBehalfOf for a request at hand (the gateway's forwarding step): its context read from the request
 * itself rather than from the async context, which holds the same object while the request runs.
 */
export function onBehalfOfRequest(req: IncomingMessage, overrides: Partial<OnBehalfOf> = {}): OnBehalfOf {
  return onBehalfOfContext(requestContext(req), overrides);
}

function onBehalfOfContext(ctx: RequestContext | undefined, overrides: Partial<OnBehalfOf>): OnBehalfOf {
  const merged: OnBehalfOf = ctx
    ? {
        principal: ctx.principal ?? 'service',
        requestId: ctx.requestId,
        workspaceId: ctx.workspaceId,
        apiKeyId: ctx.apiKeyId,
        scopes: ctx.scopes,
        invitationId: ctx.invitationId,
      }
    : { principal: 'service', requestId: newRequestId() };
  for (const k in overrides) {
    const v = overrides[k as keyof OnBehalfOf];
    if (v !== undefined) (merged as unknown as Record<string, unknown>)[k] = v;
  }
  return merged;
}

/** The context of a request handled by an app from createHttpApp. */
export function requestContext(req: IncomingMessage): RequestContext {
  return (req as WithContext)[CONTEXT] ?? initRequestContext(req);
}

/**
 * For the gateway's auth steps: records who the request acts for (workspace, key and scopes, or the
 * operator, or the booking page), and adds the workspace to the log context so every later log line of
 * this request carries it.
 */
export function setRequestContext(
  req: IncomingMessage,
  values: { workspaceId?: string; apiKeyId?: string; principal?: PrincipalKind; scopes?: readonly string[] },
): RequestContext {
  const ctx = Object.assign(requestContext(req), values);
  // The store object is per request (runWithContext copies it), so mutating it affects only this request.
  if (values.workspaceId !== undefined) currentContext().workspace_id = values.workspaceId;
  return ctx;
}

/** The workspace the request acts for; every service query is scoped by it (decisions.md §3). */
export function requireWorkspace(req: IncomingMessage): string {
  const { workspaceId } = requestContext(req);
  if (!workspaceId) throw new DomainError('unauthenticated');
  return workspaceId;
}

/** The client's Idempotency-Key, to hand on beside the credential (the credential carries the rest). */
export function idempotencyHeader(ctx: RequestContext): Record<string, string> {
  return ctx.idempotencyKey === undefined ? {} : { [CONTEXT_HEADERS.idempotencyKey]: ctx.idempotencyKey };
}
