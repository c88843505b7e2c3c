import { z } from 'zod';
import { emailSchema } from '../../email';
import { addIssue } from '../../issues';
import { timezoneSchema } from '../../time';
import { NAME_MIN_LENGTH } from '../fields';
import { conferencingUrlTemplateSchema, HOST_NAME_MAX_LENGTH } from './hosts';

/**
 * Body of PATCH /admin/v1/workspaces/{ws}/hosts/{host}: any field of createHostBodySchema, at least
 * one; `conferencing_url_template: null` removes the template. A new timezone re-reads the existing
 * weekly schedule in that zone (09:00 stays 09:00 local).
 */
export const patchHostBodySchema = z
  .strictObject({
    name: z.string().min(NAME_MIN_LENGTH).max(HOST_NAME_MAX_LENGTH).optional(),
    email: emailSchema.optional(),
    timezone: timezoneSchema.optional(),
    conferencing_url_template: conferencingUrlTemplateSchema.nullable().optional(),
  })
  .superRefine((b, ctx) => {
    if (Object.keys(b).length === 0) addIssue(ctx, 'required', 'At least one field is required.');
  })
  .meta({ id: 'AdminPatchHostRequest', description: 'Body of PATCH /admin/v1/workspaces/{ws}/hosts/{host}.' });

export type PatchHostBody = z.infer<typeof patchHostBodySchema>;
