export { SchedulingClient, createClient, BROWSER_REFUSAL, type ClientOptions } from './client';
export { ApiError, NetworkError, WebhookVerificationError, isApiError, type ApiErrorCode } from './errors';
export { Paginator } from './paginator';
export { verifyWebhook, type WebhookHeaders } from './webhooks';
export type { ResponseInfo } from './transport';
export { CLIENT_VERSION } from './version';
export * from './types';
