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

/** Random bytes for this many ids are drawn at once: one CSPRNG call per 256 ids instead of one each. */
const IDS_PER_DRAW = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * A new id of the kind. The random part's bytes come from the CSPRNG in batches (as crypto.randomUUID's
 * do, and libs/http's request ids): every id takes its own 16 fresh bytes, none is used twice. One
 * randomBytes call per id cost about 2.5–3 µs (a synchronous call into OpenSSL each); from the batch, about 0.2.
 */
export function newId<P extends IdPrefix>(prefix: P): Id<P> {
  if (offset + ID_RANDOM_BYTES > pool.length) {
    pool = randomBytes(ID_RANDOM_BYTES * IDS_PER_DRAW);
    offset = 0;
  }
  const id = `${prefix}_${pool.toString('base64url', offset, offset + ID_RANDOM_BYTES)}` as Id<P>;
  offset += ID_RANDOM_BYTES;
  return id;
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
