/**
 * The key ring every service that encrypts at rest reads from its environment: the ONE place that parses
 * it (services call secretBoxFromEnv, and their config schemas check it with secretsEnvProblem, so a bad
 * ring stops the process at start-up with a readable message).
 *
 * `SECRETS_KEYS="k2:<base64>,k1:<base64>"`: comma-separated `<key id>:<base64 of 32 bytes>`; the FIRST
 * key seals new values, every key opens. Key ids are 1 to 16 of `[A-Za-z0-9_-]` and are written into
 * every sealed value, so a value names the key that opens it.
 *
 * Still accepted, for deployments made before the ring (the same ring, spelled the old way):
 * `SECRETS_KEY=<base64>` (id `SECRETS_KEY_ID`, default `k1`) + `SECRETS_OLD_KEYS="<id>:<base64>,…"`
 * is `SECRETS_KEYS="k1:<SECRETS_KEY>,<SECRETS_OLD_KEYS>"`. Setting both spellings is an error, so a
 * rotation can never be half-applied by a forgotten variable.
 *
 * Messages never contain key material: an entry is named by its position and, once valid, its id.
 */

export class SecretsError extends Error {
  override name = 'SecretsError';
}

/** A malformed ring; `variable` is the environment variable at fault. */
export class KeyRingError extends SecretsError {
  override name = 'KeyRingError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;
export const KEY_BYTES = 32;

export interface KeyRing {
  /** Seals new values: the first key of SECRETS_KEYS (or SECRETS_KEY_ID). */
  readonly currentId: string;
  /** Every key id in ring order, the current one first. */
  readonly ids: readonly string[];
  /** The key of an id, or undefined when the ring does not have it. */
  key(id: string): Buffer | undefined;
  /** Which spelling configured it: the variable named in "not in the ring" errors. */
  readonly variable: 'SECRETS_KEYS' | 'SECRETS_KEY';
}

/** The environment variables of the ring (both spellings); empty strings count as unset. */
export interface SecretsEnv {
  SECRETS_KEYS?: string;
  SECRETS_KEY?: string;
  SECRETS_KEY_ID?: string;
  SECRETS_OLD_KEYS?: string;
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const URL_BASE64 = /^[A-Za-z0-9_-]+={0,2}$/;

const set = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

function decodeKey(b64: string, variable: string, what: string): Buffer {
  if (!STANDARD_BASE64.test(b64) && !URL_BASE64.test(b64)) throw new KeyRingError(variable, `${what} is not valid base64`);
  const key = Buffer.from(b64, STANDARD_BASE64.test(b64) ? 'base64' : 'base64url');
  if (key.length !== KEY_BYTES) throw new KeyRingError(variable, `${what} must be base64 of exactly ${KEY_BYTES} bytes (it decodes to ${key.length})`);
  return key;
}

function checkId(id: string, variable: string, position: string): void {
  // An invalid id is not echoed: a key pasted where the id belongs would otherwise land in a log.
  if (!KEY_ID_PATTERN.test(id)) throw new KeyRingError(variable, `${position}: the key id must be 1 to 16 of A-Z a-z 0-9 _ -`);
}

/** `id:base64,id:base64` → entries in order. */
function parseEntries(list: string, variable: string): Array<[string, Buffer]> {
  const entries: Array<[string, Buffer]> = [];
  const parts = list.split(',').map((p) => p.trim());
  parts.forEach((part, i) => {
    const position = `entry ${i + 1}`;
    if (part === '') {
      // A trailing comma is harmless; an empty entry in the middle is a paste mistake worth stopping for.
      if (i === parts.length - 1 && i > 0) return;
      throw new KeyRingError(variable, `${position} is empty (expected <key id>:<base64 of ${KEY_BYTES} bytes>)`);
    }
    const colon = part.indexOf(':');
    if (colon < 0) throw new KeyRingError(variable, `${position} is not <key id>:<base64 of ${KEY_BYTES} bytes>`);
    const id = part.slice(0, colon).trim();
    checkId(id, variable, position);
    entries.push([id, decodeKey(part.slice(colon + 1).trim(), variable, `the key of "${id}"`)]);
  });
  return entries;
}

function ringOf(entries: Array<[string, Buffer]>, variable: KeyRing['variable'], duplicateIn: string): KeyRing {
  const keys = new Map<string, Buffer>();
  for (const [id, key] of entries) {
    if (keys.has(id)) throw new KeyRingError(duplicateIn, `key id "${id}" appears twice; every key needs its own id`);
    keys.set(id, key);
  }
  const ids = [...keys.keys()];
  return { currentId: ids[0]!, ids, key: (id) => keys.get(id), variable };
}

/** Parses the ring from the environment; throws KeyRingError naming the variable and the problem. */
export function parseKeyRing(env: SecretsEnv): KeyRing {
  const keysVar = set(env.SECRETS_KEYS);
  const legacy = (['SECRETS_KEY', 'SECRETS_KEY_ID', 'SECRETS_OLD_KEYS'] as const).filter((name) => set(env[name]) !== undefined);
  if (keysVar !== undefined) {
    if (legacy.length > 0) {
      throw new KeyRingError('SECRETS_KEYS', `replaces SECRETS_KEY, SECRETS_KEY_ID and SECRETS_OLD_KEYS; set only SECRETS_KEYS (also set: ${legacy.join(', ')})`);
    }
    const entries = parseEntries(keysVar, 'SECRETS_KEYS');
    if (entries.length === 0) throw new KeyRingError('SECRETS_KEYS', 'holds no key');
    return ringOf(entries, 'SECRETS_KEYS', 'SECRETS_KEYS');
  }
  const key = set(env.SECRETS_KEY);
  if (key === undefined) {
    const stray = legacy.length > 0 ? ` (${legacy.join(' and ')} alone is not enough)` : '';
    throw new KeyRingError('SECRETS_KEYS', `required: <key id>:<base64 of ${KEY_BYTES} bytes>[,<older id>:<base64>…], e.g. k1:$(openssl rand -base64 32); or SECRETS_KEY as before${stray}`);
  }
  const currentId = set(env.SECRETS_KEY_ID) ?? 'k1';
  checkId(currentId, 'SECRETS_KEY_ID', 'SECRETS_KEY_ID');
  const current: [string, Buffer] = [currentId, decodeKey(key, 'SECRETS_KEY', 'the key')];
  const old = set(env.SECRETS_OLD_KEYS);
  return ringOf([current, ...(old === undefined ? [] : parseEntries(old, 'SECRETS_OLD_KEYS'))], 'SECRETS_KEY', 'SECRETS_OLD_KEYS');
}

/**
 * For config schemas: what is wrong with the ring, as the variable and message to report, or null.
 * (A service's zod schema calls it in a superRefine, so `loadConfig` lists it with the other problems.)
 */
export function secretsEnvProblem(env: SecretsEnv): { variable: string; message: string } | null {
  try {
    parseKeyRing(env);
    return null;
  } catch (err) {
    if (err instanceof KeyRingError) return { variable: err.variable, message: err.message.slice(err.variable.length + 2) };
    throw err;
  }
}

/**
 * A service's config schema checks its ring with this, so a bad ring is listed with the other problems
 * at start-up (loadConfig), before anything is sealed:
 * `.superRefine(checkSecretsEnv, { when: () => true })` (`when`: also when another variable is wrong).
 */
export function checkSecretsEnv(env: SecretsEnv, ctx: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void }): void {
  const problem = secretsEnvProblem(env);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
}
