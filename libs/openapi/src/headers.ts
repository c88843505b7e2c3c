import { REQUEST_ID_HEADER_RE } from '@sched/contracts';
import type { JsonSchema } from './schema-components';

/** Response headers of decisions.md §1, §4 and §12, as OpenAPI header objects. */
export const RESPONSE_HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': {
    description: 'Identifier of the request; equals meta.request_id. A caller-sent X-Request-Id of 1 to 128 characters of [A-Za-z0-9._:-] is kept.',
    required: true,
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: 'Requests allowed per window for this API key (decisions.md §12).',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window resets.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: 'Present and `true` when this is the stored answer of an earlier request with the same Idempotency-Key (decisions.md §4).',
    schema: { type: 'string', enum: ['true'] },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme: `Bearer`.',
    required: true,
    schema: { type: 'string' },
  },
};

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Request header parameters shared by operations. */
export function requestHeaderParameters(idempotencyKeySchema: JsonSchema): Record<string, JsonSchema> {
  return {
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Optional on every POST: 1 to 255 printable ASCII characters. Scope: workspace, API key, method and path; kept 24 hours. ' +
        'The same key with the same request replays the stored answer (Idempotent-Replayed: true); with a different request it is 422 idempotency_key_reused; ' +
        'while the first is still running it is 409 idempotency_request_in_progress. 5xx and 429 answers are not stored, so a retry runs afresh.',
      schema: idempotencyKeySchema,
    },
    RequestId: {
      name: 'X-Request-Id',
      in: 'header',
      required: false,
      description: 'Optional caller-chosen request id, echoed in X-Request-Id and meta.request_id when it matches the pattern; otherwise one is made.',
      schema: { type: 'string', pattern: REQUEST_ID_HEADER_RE.source },
    },
  };
}

/** Standard Webhooks headers of every delivery (decisions.md §11). */
export const WEBHOOK_HEADER_PARAMETERS: JsonSchema[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (`wev_…`), equal to the body `id`; stable across retries: deduplicate on it.',
    schema: { type: 'string', pattern: '^wev_[A-Za-z0-9_-]{16,36}$' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds when this attempt was signed. Reject timestamps more than 5 minutes away from now.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated signatures `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`, keyed with the base64 part of the endpoint secret `whsec_…`.',
    schema: { type: 'string' },
  },
];
