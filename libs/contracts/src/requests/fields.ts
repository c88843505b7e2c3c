import { z } from 'zod';

/** Limits of api-v1.md that several requests share. */
export const EVENT_TYPE_ID_MAX_LENGTH = 40;
export const GUEST_NAME_MAX_LENGTH = 120;
/** decisions (contracts/DECISIONS.md): a name needs at least one character. */
export const NAME_MIN_LENGTH = 1;

/**
 * An identifier the caller refers to (api-v1.md: at most 40 characters). Only the length is checked
 * here; an id that names nothing is a 404/422 later, so a well-formed but unknown id never looks
 * different from one of another workspace.
 */
export function referenceIdSchema(description: string) {
  return z.string().min(1).max(EVENT_TYPE_ID_MAX_LENGTH).meta({ description });
}

export const expectedVersionSchema = z
  .number()
  .int()
  .min(1)
  .meta({ id: 'ExpectedVersion', description: 'Optimistic concurrency version, at least 1.' });

/** A URL with http or https scheme and a host, at most 2048 characters. */
export const HTTP_URL_MAX_LENGTH = 2048;
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

export const httpUrlSchema = z
  .string()
  .max(HTTP_URL_MAX_LENGTH)
  .refine(isHttpUrl, { error: 'Must be an http or https URL.', params: { issue: 'invalid_format' } })
  .meta({ format: 'uri', description: 'http or https URL, at most 2048 characters.' });
