export { createHttpApp, type HttpApp, type HttpAppOptions, type RouteOptions } from './create-http-app';
export type { HttpMethod } from './route-table';
export type { ReadinessChecks } from './health.routes';
export { sendData, sendDataJson, sendError, errorBody, statusOf, writesPlainBody, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, type ErrorBody } from './envelope';
export {
  requestContext,
  requireWorkspace,
  setRequestContext,
  contextHeaders,
  newRequestId,
  resolveRequestId,
  CONTEXT_HEADERS,
  type RequestContext,
} from './request-context';
export { parseBody, parseQuery, parseParams, issuesToDetails } from './validation';
export { BODY_LIMIT_BYTES } from './json-body.middleware';
export { inputGuard } from './input-guard.middleware';
export { fastPath, type FastRoute, type FastStep } from './fast-path';
export {
  createInternalClient,
  toUpstreamDomainError,
  UpstreamError,
  type UpstreamErrorKind,
  type InternalClient,
  type InternalClientOptions,
  type InternalRequestOptions,
  type InternalResponse,
} from './internal-client';
export {
  createForwardClient,
  type ForwardClient,
  type ForwardClientOptions,
  type ForwardRequestOptions,
  type ForwardResponse,
} from './forward-client';
export { createRetentionMetrics } from './retention-metrics';
