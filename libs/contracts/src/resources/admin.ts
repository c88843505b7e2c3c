import { z } from 'zod';
import { emailSchema } from '../email';
import { publicEventKindSchema } from '../event-kinds';
import { idSchema } from '../ids';
import { rateLimitSchema } from '../requests/admin/api-keys';
import { scheduleOverrideSchema, weeklyScheduleSchema } from '../requests/admin/schedules';
import { scopeSchema } from '../scopes';
import { timestampSchema, timezoneSchema } from '../time';
import { eventTypeSchema } from './event-type';
import { calendarErrorCodeSchema, eventTypeAccessSchema } from './values';

/** Resources of the admin API (decisions.md §13; not part of v1). Secrets appear only in *Created. */
export const workspaceSchema = z
  .strictObject({ id: idSchema('wsp'), name: z.string(), slug: z.string(), mode: z.enum(['live', 'test']), created_at: timestampSchema })
  .meta({ id: 'AdminWorkspace', description: 'A customer workspace.' });

const apiKeyFields = {
  id: idSchema('key'),
  workspace_id: idSchema('wsp'),
  name: z.string(),
  key_hint: z.string().meta({ description: 'The first characters of the key, to tell keys apart; not a secret.' }),
  scopes: z.array(scopeSchema),
  rate_limit: rateLimitSchema.nullable(),
  expires_at: timestampSchema.nullable(),
  revoked_at: timestampSchema.nullable(),
  created_at: timestampSchema,
};

export const apiKeySchema = z
  .strictObject(apiKeyFields)
  .meta({ id: 'AdminApiKey', description: 'An API key without its secret; rate_limit null means the default.' });

export const apiKeyCreatedSchema = z
  .strictObject({ ...apiKeyFields, key: z.string().meta({ description: 'sk_live_… or sk_test_…; shown once.' }) })
  .meta({ id: 'AdminApiKeyCreated', description: 'A new API key with its secret, shown once.' });

export const hostSchema = z
  .strictObject({
    id: idSchema('hst'),
    workspace_id: idSchema('wsp'),
    name: z.string(),
    email: emailSchema,
    timezone: timezoneSchema,
    conferencing_url_template: z.string().nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminHost', description: 'A host who offers Event Types.' });

export const scheduleSchema = z
  .strictObject({
    host_id: idSchema('hst'),
    weekly: weeklyScheduleSchema,
    overrides: z.array(scheduleOverrideSchema),
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminSchedule', description: "A host's availability schedule." });

export const calendarConnectionSchema = z
  .strictObject({
    id: idSchema('cal'),
    host_id: idSchema('hst'),
    provider: z.enum(['caldav', 'google', 'microsoft']),
    url: z.string(),
    username: z.string(),
    calendar_url: z.string().nullable(),
    status: z.enum(['connected', 'error', 'reauthorization_required']).meta({
      description:
        'connected; error: a provider call failed in a way retrying will not fix (error_code says which); reauthorization_required: the OAuth grant was revoked or expired, the host must connect again (POST …/calendar/oauth). Both make the host unbookable.',
    }),
    error_code: calendarErrorCodeSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminCalendarConnection', description: 'A calendar connection (CalDAV, or Google / Microsoft made through the OAuth flow), never with its password or tokens.' });

/** Answer of POST …/hosts/{host}/calendar/oauth: where to send the host to consent (single use, until expires_at). */
export const calendarOAuthStartSchema = z
  .strictObject({
    provider: z.enum(['google', 'microsoft']),
    authorization_url: z.string(),
    expires_at: timestampSchema,
  })
  .meta({ id: 'AdminCalendarOAuthStart', description: "The provider's authorization URL for the host to open; it carries a single-use state that expires at expires_at." });

export const adminEventTypeSchema = eventTypeSchema
  .extend({ access: eventTypeAccessSchema })
  .meta({ id: 'AdminEventType', description: 'An Event Type as the admin API shows it: the v1 fields plus access.' });

const webhookEndpointFields = {
  id: idSchema('whe'),
  workspace_id: idSchema('wsp'),
  url: z.string(),
  events: z.array(publicEventKindSchema),
  enabled: z.boolean().meta({ description: 'False once disabled by an admin or by the receiver answering 410 Gone.' }),
  disabled_reason: z
    .enum(['admin', 'gone'])
    .nullable()
    .meta({ description: 'Why the endpoint is disabled: `admin` (PATCH enabled false) or `gone` (the receiver answered 410); null when enabled.' }),
  created_at: timestampSchema,
  updated_at: timestampSchema,
};

export const webhookEndpointSchema = z
  .strictObject(webhookEndpointFields)
  .meta({ id: 'AdminWebhookEndpoint', description: 'A webhook receiver without its secret.' });

export const webhookEndpointCreatedSchema = z
  .strictObject({ ...webhookEndpointFields, secret: z.string().meta({ description: 'whsec_<base64>; shown once.' }) })
  .meta({ id: 'AdminWebhookEndpointCreated', description: 'A new webhook endpoint with its signing secret, shown once.' });

export type Workspace = z.infer<typeof workspaceSchema>;
export type ApiKey = z.infer<typeof apiKeySchema>;
export type ApiKeyCreated = z.infer<typeof apiKeyCreatedSchema>;
export type Host = z.infer<typeof hostSchema>;
export type Schedule = z.infer<typeof scheduleSchema>;
export type CalendarConnection = z.infer<typeof calendarConnectionSchema>;
export type CalendarOAuthStart = z.infer<typeof calendarOAuthStartSchema>;
export type AdminEventType = z.infer<typeof adminEventTypeSchema>;
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type WebhookEndpointCreated = z.infer<typeof webhookEndpointCreatedSchema>;
