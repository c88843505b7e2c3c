import { Webhook, WebhookVerificationError as SignatureError } from 'standardwebhooks';
import { webhookBodySchema, type WebhookBody } from '@sched/contracts';
import { WebhookVerificationError } from './errors';

/** Node's req.headers, a fetch Headers, or a plain object; names in any case. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function pick(headers: WebhookHeaders): Record<(typeof NAMES)[number], string> {
  const lower = new Map<string, string>();
  if (headers instanceof Headers) headers.forEach((v, k) => lower.set(k.toLowerCase(), v));
  else for (const [k, v] of Object.entries(headers)) if (v !== undefined) lower.set(k.toLowerCase(), Array.isArray(v) ? v.join(' ') : v);
  const out = {} as Record<(typeof NAMES)[number], string>;
  for (const name of NAMES) {
    const value = lower.get(name);
    if (!value) throw new WebhookVerificationError(`missing header ${name}`);
    out[name] = value;
  }
  return out;
}

/**
 * Verifies a webhook delivery (Standard Webhooks, decisions.md §11) and returns its typed body.
 * `payload` must be the raw request body exactly as received (not re-serialized JSON). Rejects a
 * bad signature, a timestamp more than 5 minutes old (or ahead), a body that is not a v1 webhook
 * body, and a body whose id is not the webhook-id header. Deduplicate on the returned `id`.
 */
export function verifyWebhook(payload: string | Buffer, headers: WebhookHeaders, secret: string): WebhookBody {
  const picked = pick(headers);
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch {
    throw new WebhookVerificationError('the webhook secret is not a valid whsec_ secret');
  }
  let body: unknown;
  try {
    body = webhook.verify(payload, picked);
  } catch (err) {
    if (err instanceof SignatureError) throw new WebhookVerificationError(`verification failed: ${err.message}`);
    throw new WebhookVerificationError('the payload is not JSON');
  }
  const parsed = webhookBodySchema.safeParse(body);
  if (!parsed.success) throw new WebhookVerificationError('the signed payload is not a webhook body of contract v1');
  if (parsed.data.id !== picked['webhook-id']) throw new WebhookVerificationError('the body id differs from the webhook-id header');
  return parsed.data as WebhookBody;
}
