import { z } from 'zod';
import { addIssue } from '../../issues';
import { eventTypeAccessSchema, eventTypeStatusSchema, meetingTypeSchema } from '../../resources/values';
import { NAME_MIN_LENGTH, referenceIdSchema } from '../fields';

/** decisions.md §7 and contracts/DECISIONS.md: bounds and defaults of the writable fields. */
export const EVENT_TYPE_LIMITS = {
  nameMax: 120,
  slugMax: 60,
  descriptionMax: 2000,
  durationMin: 1,
  durationMax: 1440,
  bufferMax: 1440,
  noticeMax: 525_600,
  advanceMin: 1,
  advanceMax: 525_600,
} as const;

export const EVENT_TYPE_DEFAULTS = {
  description: null,
  buffer_before_minutes: 0,
  buffer_after_minutes: 0,
  minimum_notice_minutes: 0,
  /** 60 days. */
  maximum_advance_minutes: 86_400,
  status: 'active',
  access: 'public',
  // slot_interval_minutes defaults to duration_minutes.
} as const;

// '*' not '+': an empty slug is only too_short, not also invalid_format.
const SLUG_RE = /^[a-z0-9-]*$/;
const L = EVENT_TYPE_LIMITS;
const minutes = (min: number, max: number) => z.number().int().min(min).max(max);

const writable = {
  name: z.string().min(NAME_MIN_LENGTH).max(L.nameMax),
  slug: z
    .string()
    .min(1)
    .max(L.slugMax)
    .regex(SLUG_RE, { error: 'Only lower-case letters, digits and hyphens.' })
    .meta({ description: '1 to 60 of [a-z0-9-], unique in the workspace.' }),
  description: z.string().max(L.descriptionMax).nullable(),
  duration_minutes: minutes(L.durationMin, L.durationMax),
  slot_interval_minutes: minutes(L.durationMin, L.durationMax),
  buffer_before_minutes: minutes(0, L.bufferMax),
  buffer_after_minutes: minutes(0, L.bufferMax),
  minimum_notice_minutes: minutes(0, L.noticeMax),
  maximum_advance_minutes: minutes(L.advanceMin, L.advanceMax),
  meeting_type: meetingTypeSchema,
  status: eventTypeStatusSchema,
  access: eventTypeAccessSchema,
};

const D = EVENT_TYPE_DEFAULTS;

/** Body of POST /admin/v1/workspaces/{ws}/event-types. Defaults are filled in by parsing. */
export const createEventTypeBodySchema = z
  .strictObject({
    host_id: referenceIdSchema('Host offering the Event Type; set at creation only.'),
    name: writable.name,
    slug: writable.slug,
    description: writable.description.default(D.description),
    duration_minutes: writable.duration_minutes,
    slot_interval_minutes: writable.slot_interval_minutes.optional().meta({ description: 'Default: duration_minutes.' }),
    buffer_before_minutes: writable.buffer_before_minutes.default(D.buffer_before_minutes),
    buffer_after_minutes: writable.buffer_after_minutes.default(D.buffer_after_minutes),
    minimum_notice_minutes: writable.minimum_notice_minutes.default(D.minimum_notice_minutes),
    maximum_advance_minutes: writable.maximum_advance_minutes.default(D.maximum_advance_minutes),
    meeting_type: writable.meeting_type,
    status: writable.status.default(D.status),
    access: writable.access.default(D.access),
  })
  .transform((b) => ({ ...b, slot_interval_minutes: b.slot_interval_minutes ?? b.duration_minutes }))
  .meta({ id: 'AdminCreateEventTypeRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/event-types.' });

/** Body of PATCH /admin/v1/workspaces/{ws}/event-types/{evt}: any writable field, at least one. */
export const patchEventTypeBodySchema = z
  .strictObject({
    name: writable.name.optional(),
    slug: writable.slug.optional(),
    description: writable.description.optional(),
    duration_minutes: writable.duration_minutes.optional(),
    slot_interval_minutes: writable.slot_interval_minutes.optional(),
    buffer_before_minutes: writable.buffer_before_minutes.optional(),
    buffer_after_minutes: writable.buffer_after_minutes.optional(),
    minimum_notice_minutes: writable.minimum_notice_minutes.optional(),
    maximum_advance_minutes: writable.maximum_advance_minutes.optional(),
    meeting_type: writable.meeting_type.optional(),
    status: writable.status.optional(),
    access: writable.access.optional(),
  })
  .superRefine((b, ctx) => {
    if (Object.keys(b).length === 0) addIssue(ctx, 'required', 'At least one field is required.');
  })
  .meta({ id: 'AdminPatchEventTypeRequest', description: 'Body of PATCH /admin/v1/workspaces/{ws}/event-types/{evt}.' });

export type CreateEventTypeBody = z.infer<typeof createEventTypeBodySchema>;
export type PatchEventTypeBody = z.infer<typeof patchEventTypeBodySchema>;
