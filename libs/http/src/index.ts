export { createHttpApp, type FastPathRoutes, type HttpApp, type HttpAppOptions, type RouteOptions } from './create-http-app';
export type { HttpMethod } from './route-table';
export type { ReadinessChecks } from './health.routes';
export { sendData, sendDataJson, sendError, errorBody, statusOf, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, type ErrorBody } from './envelope';
export { sendText, sendJson, JSON_UTF8 } from './respond';
export {
  requestContext,
  requireWorkspace,
  setRequestContext,
  idempotencyHeader,
  onBehalfOf,
  runWithRequestContext,
  onBehalfOfRequest,
  newRequestId,
  resolveRequestId,
  CONTEXT_HEADERS,
  type RequestContext,
} from './request-context';
export {
  createCredentialSigner,
  createCredentialVerifier,
  parseInternalKeyRing,
  CredentialRefused,
  InternalKeyRingError,
  INTERNAL_CREDENTIAL_HEADER,
  CREDENTIAL_TTL_SECONDS,
  type CallerClaims,
  type CredentialSigner,
  type CredentialVerifier,
  type InternalKeyRing,
  type OnBehalfOf,
  type PrincipalKind,
} from './internal-credential';
export { accessCheck, apiKeyWith, calledBy, forbidden, OPEN_ROUTES, OPERATOR_ONLY, type AccessTable, type RouteAccess } from './route-access';
export { NO_BODY, NO_QUERY, parseBody, parseQuery, parseParams, issuesToDetails } from './validation';
export { BODY_LIMIT_BYTES } from './json-body.middleware';
export { inputGuard } from './input-guard.middleware';
export { type FastRequest, type FastRoute, type FastStep } from './fast-path';
export {
  registerOperations,
  checkOperationHandlers,
  operationAccess,
  type OperationHandler,
  type OperationHandlers,
  type OperationInput,
  type RegisterOperationsOptions,
} from './operations';
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
