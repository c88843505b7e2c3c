import { z } from 'zod';
import { pushIssue, type IssueWord } from './issues';

/** Bounds of `metadata` (decisions.md §10). */
export const METADATA_LIMITS = {
  maxKeys: 50,
  minKeyLength: 1,
  maxKeyLength: 40,
  /** Bytes of UTF-8 in JSON.stringify(metadata). */
  maxBytes: 8192,
  /** The object itself is depth 1; an object or array inside it depth 2. */
  maxDepth: 3,
} as const;

export type Metadata = Record<string, unknown>;

interface Problem {
  issue: IssueWord;
  message: string;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Walks the value without recursion (a deep body must not overflow the stack) and reports the
 * first depth or type problem. Only JSON values are allowed.
 */
function structureProblem(root: Record<string, unknown>): Problem | null {
  const stack: Array<[unknown, number]> = Object.values(root).map((v) => [v, 2]);
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return { issue: 'invalid_type', message: 'Metadata values must be JSON.' };
      continue;
    }
    if (typeof value !== 'object' || (!Array.isArray(value) && !isPlainObject(value))) {
      return { issue: 'invalid_type', message: 'Metadata values must be JSON.' };
    }
    if (depth > METADATA_LIMITS.maxDepth) {
      return { issue: 'too_deep', message: `Metadata may nest at most ${METADATA_LIMITS.maxDepth} levels deep.` };
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, depth + 1]);
  }
  return null;
}

/** Every bound broken, in a fixed order; empty when the metadata is acceptable. */
export function metadataProblems(value: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  const keys = Object.keys(value);
  if (keys.length > METADATA_LIMITS.maxKeys) {
    problems.push({ issue: 'too_many_keys', message: `Metadata may have at most ${METADATA_LIMITS.maxKeys} keys.` });
  }
  if (keys.some((k) => k.length < METADATA_LIMITS.minKeyLength)) {
    problems.push({ issue: 'key_too_short', message: 'Metadata keys must not be empty.' });
  }
  if (keys.some((k) => k.length > METADATA_LIMITS.maxKeyLength)) {
    problems.push({ issue: 'key_too_long', message: `Metadata keys may have at most ${METADATA_LIMITS.maxKeyLength} characters.` });
  }
  const structure = structureProblem(value);
  if (structure) {
    problems.push(structure);
  } else if (Buffer.byteLength(JSON.stringify(value), 'utf8') > METADATA_LIMITS.maxBytes) {
    problems.push({ issue: 'too_large', message: `Metadata may be at most ${METADATA_LIMITS.maxBytes} bytes as JSON.` });
  }
  return problems;
}

/** Caller-owned JSON object, stored and returned unchanged. Each broken bound is one issue on `metadata`. */
export const metadataSchema = z
  .record(z.string(), z.unknown())
  .check((payload) => {
    for (const p of metadataProblems(payload.value)) pushIssue(payload, p.issue, p.message);
  })
  .meta({
    id: 'Metadata',
    description:
      'Caller-owned JSON object: at most 50 keys, key names 1 to 40 characters, at most 8192 bytes as JSON, nesting depth at most 3.',
    maxProperties: METADATA_LIMITS.maxKeys,
    propertyNames: { type: 'string', minLength: METADATA_LIMITS.minKeyLength, maxLength: METADATA_LIMITS.maxKeyLength },
  });
