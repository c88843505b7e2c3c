import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * Identifier prefixes (decisions.md §1). The list is the single place to add a new kind of id.
 * An id is `<prefix>_<random>`; the random part is 16 random bytes in base64url (22 characters,
 * 128 bits), so ids are never sequential and an id is 26 characters in all.
 */
export const ID_PREFIXES = {
  biv: 'booking invitation',
  bkg: 'booking',
  evt: 'event type',
  hst: 'host',
  wsp: 'workspace',
  key: 'API key',
  whe: 'webhook endpoint',
  wev: 'webhook event (every published event, public or internal)',
  whd: 'webhook delivery',
  cal: 'calendar connection',
  req: 'request',
} as const;
export type IdPrefix = keyof typeof ID_PREFIXES;
export const ID_PREFIX_LIST = Object.keys(ID_PREFIXES) as IdPrefix[];

/** Shape of an id made by newId. Schemas infer plain `string` so rows read from a database fit. */
export type Id<P extends IdPrefix = IdPrefix> = `${P}_${string}`;

export const ID_RANDOM_BYTES = 16;
/**
 * Accepted length of the random part. newId makes 22 characters; the range leaves room for a
 * longer random part later while keeping every id within the 40-character limit of api-v1.md.
 */
const ID_BODY = '[A-Za-z0-9_-]{16,36}';

export function newId<P extends IdPrefix>(prefix: P): Id<P> {
  return `${prefix}_${randomBytes(ID_RANDOM_BYTES).toString('base64url')}`;
}

const patterns = new Map<IdPrefix, RegExp>();
export function idPattern(prefix: IdPrefix): RegExp {
  let re = patterns.get(prefix);
  if (!re) {
    re = new RegExp(`^${prefix}_${ID_BODY}$`);
    patterns.set(prefix, re);
  }
  return re;
}

export function isId<P extends IdPrefix>(prefix: P, value: unknown): value is Id<P> {
  return typeof value === 'string' && idPattern(prefix).test(value);
}

/** Output schema of an identifier of one kind (used in resources and events). */
export function idSchema<P extends IdPrefix>(prefix: P) {
  return z
    .string()
    .regex(idPattern(prefix))
    .meta({ description: `Identifier of a ${ID_PREFIXES[prefix]}, prefix \`${prefix}_\`.` });
}
