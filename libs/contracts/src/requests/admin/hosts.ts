import { z } from 'zod';
import { emailSchema } from '../../email';
import { timezoneSchema } from '../../time';
import { HTTP_URL_MAX_LENGTH, httpUrlSchema, isHttpUrl, NAME_MIN_LENGTH } from '../fields';

export const HOST_NAME_MAX_LENGTH = 120;
export const CONFERENCING_PLACEHOLDER = '{booking_id}';

/** The template is an http(s) URL once `{booking_id}` is filled in, and it must contain the placeholder. */
export const conferencingUrlTemplateSchema = z
  .string()
  .max(HTTP_URL_MAX_LENGTH)
  .refine((t) => t.includes(CONFERENCING_PLACEHOLDER) && isHttpUrl(fillConferencingUrl(t, 'bkg_x')), {
    error: 'Must be an http or https URL containing {booking_id}.',
    params: { issue: 'invalid_format' },
  })
  .meta({
    id: 'ConferencingUrlTemplate',
    description: 'http(s) URL with the placeholder `{booking_id}`, e.g. `https://meet.example.com/{booking_id}`.',
  });

/** Every placeholder is replaced; the id is URL-safe, so no encoding is needed. */
export function fillConferencingUrl(template: string, bookingId: string): string {
  return template.split(CONFERENCING_PLACEHOLDER).join(bookingId);
}

/** Body of POST /admin/v1/workspaces/{ws}/hosts. */
export const createHostBodySchema = z
  .strictObject({
    name: z.string().min(NAME_MIN_LENGTH).max(HOST_NAME_MAX_LENGTH),
    email: emailSchema,
    timezone: timezoneSchema,
    conferencing_url_template: conferencingUrlTemplateSchema.nullable().optional(),
  })
  .meta({ id: 'AdminCreateHostRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/hosts.' });

export const CALDAV_USERNAME_MAX_LENGTH = 255;
export const CALDAV_PASSWORD_MAX_LENGTH = 1024;

/** Body of PUT /admin/v1/workspaces/{ws}/hosts/{host}/calendar. The password is never returned. */
export const putCalendarConnectionBodySchema = z
  .strictObject({
    provider: z.literal('caldav'),
    url: httpUrlSchema.meta({ description: 'CalDAV server or principal URL used for discovery.' }),
    username: z.string().min(1).max(CALDAV_USERNAME_MAX_LENGTH),
    password: z.string().min(1).max(CALDAV_PASSWORD_MAX_LENGTH),
    calendar_url: httpUrlSchema.nullable().optional().meta({ description: 'Calendar collection to use; default: the first found.' }),
  })
  .meta({ id: 'AdminPutCalendarConnectionRequest', description: 'Body of PUT /admin/v1/workspaces/{ws}/hosts/{host}/calendar.' });

/** OAuth providers a host can connect through the authorization code flow (issue 19). */
export const oauthProviderSchema = z.enum(['google', 'microsoft']);

/** Longest calendar id accepted (Google ids are e-mail-like, Graph ids are base64 of about 150 characters). */
export const OAUTH_CALENDAR_ID_MAX_LENGTH = 1024;

/** Body of POST /admin/v1/workspaces/{ws}/hosts/{host}/calendar/oauth: starts the OAuth connect flow. */
export const startCalendarOAuthBodySchema = z
  .strictObject({
    provider: oauthProviderSchema,
    calendar_id: z
      .string()
      .min(1)
      .max(OAUTH_CALENDAR_ID_MAX_LENGTH)
      .optional()
      .meta({ description: "Provider calendar id to read and write; default: the account's primary calendar." }),
  })
  .meta({ id: 'AdminStartCalendarOAuthRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/hosts/{host}/calendar/oauth.' });

export type CreateHostBody = z.infer<typeof createHostBodySchema>;
export type OAuthProvider = z.infer<typeof oauthProviderSchema>;
export type StartCalendarOAuthBody = z.infer<typeof startCalendarOAuthBodySchema>;
export type PutCalendarConnectionBody = z.infer<typeof putCalendarConnectionBodySchema>;
