import { PUBLIC_EVENT_KINDS, WEBHOOK_BODY_SCHEMAS, type PublicEventKind } from '@sched/contracts';
import { WEBHOOK_HEADER_PARAMETERS } from './headers';
import type { JsonSchema, SchemaComponents } from './schema-components';

/** api-v1.md Events and decisions.md §11 mapping. */
const MEANING: Record<PublicEventKind, string> = {
  'booking.created': 'A Booking was created (POST /v1/bookings, or the hosted booking page). data.booking is the Booking after the change.',
  'booking.rescheduled': 'A Booking was rescheduled. data.booking is the Booking after the change.',
  'booking.cancelled': 'A Booking was cancelled. data.booking is the Booking after the change.',
  'calendar.created': "The Booking's calendar event was first written. data.booking carries calendar.status `synced` and, for video meetings, meeting.join_url.",
  'calendar.failed': "Writing the Booking's calendar event failed after its retries. data.booking has calendar.status `failed`; data.error_code says why.",
};

const DELIVERY =
  'Signed with Standard Webhooks: verify `webhook-signature` over `{webhook-id}.{webhook-timestamp}.{raw body}` with the endpoint secret before trusting the body, ' +
  'and reject timestamps older than 5 minutes. Delivery follows committed state, can be retried and can arrive more than once: deduplicate on `webhook-id` (= body `id`). ' +
  'Any 2xx within 10 s is success; otherwise it is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (8 attempts, with jitter), then marked failed and dead-lettered for an admin replay.';

function camel(kind: string): string {
  return kind.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase());
}

/** OpenAPI 3.1 `webhooks`: one entry per public kind, each a POST the service makes to the receiver. */
export function webhookItems(components: SchemaComponents): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const kind of PUBLIC_EVENT_KINDS) {
    out[kind] = {
      post: {
        tags: ['Webhooks'],
        summary: kind,
        description: `${MEANING[kind]}\n\n${DELIVERY}`,
        operationId: `${camel(kind)}Webhook`,
        parameters: WEBHOOK_HEADER_PARAMETERS,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: components.use(WEBHOOK_BODY_SCHEMAS[kind], 'output') } },
        },
        responses: {
          '2XX': { description: 'Received. Any 2xx within 10 s acknowledges the delivery.' },
          default: { description: 'Any other answer, or none within 10 s, is retried.' },
        },
      },
    };
  }
  return out;
}
