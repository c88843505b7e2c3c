import { randomUUID } from 'node:crypto';

/** What every event on `scheduling.events` carries, as JSON (architecture.md, Messaging rules). */
export interface EventEnvelope<TType extends string = string, TData = unknown> {
  id: string;
  type: TType;
  /** ISO 8601 instant of the state change, not of the publish. */
  occurred_at: string;
  workspace_id: string;
  schema_version: number;
  data: TData;
}

export interface NewEnvelope<TType extends string, TData> {
  type: TType;
  workspace_id: string;
  data: TData;
  schema_version?: number;
  id?: string;
  occurred_at?: Date | string;
}

/** Fills id (UUID), occurred_at (now) and schema_version (1) so publishers only say what happened. */
export function createEnvelope<TType extends string, TData>(input: NewEnvelope<TType, TData>): EventEnvelope<TType, TData> {
  const occurred = input.occurred_at ?? new Date();
  return {
    id: input.id ?? randomUUID(),
    type: input.type,
    occurred_at: typeof occurred === 'string' ? occurred : occurred.toISOString(),
    workspace_id: input.workspace_id,
    schema_version: input.schema_version ?? 1,
    data: input.data,
  };
}

/** Thrown for a message body that can never be handled, however often it is retried. */
export class InvalidEnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidEnvelopeError';
  }
}

// AMQP short strings (routing key, message-id, type) are limited to 255 bytes.
const MAX_SHORT_STRING = 255;

function isShortString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && Buffer.byteLength(v) <= MAX_SHORT_STRING;
}

/** Checks the fields the messaging layer itself relies on; `data` is the handler's business. */
export function assertEnvelope(value: unknown): asserts value is EventEnvelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidEnvelopeError('envelope is not a JSON object');
  const e = value as Record<string, unknown>;
  if (!isShortString(e.id)) throw new InvalidEnvelopeError('envelope.id must be a non-empty string of at most 255 bytes');
  if (!isShortString(e.type)) throw new InvalidEnvelopeError('envelope.type must be a non-empty string of at most 255 bytes');
  if (typeof e.workspace_id !== 'string') throw new InvalidEnvelopeError('envelope.workspace_id must be a string');
  if (typeof e.occurred_at !== 'string') throw new InvalidEnvelopeError('envelope.occurred_at must be a string');
  if (typeof e.schema_version !== 'number') throw new InvalidEnvelopeError('envelope.schema_version must be a number');
  if (!('data' in e)) throw new InvalidEnvelopeError('envelope.data is missing');
}

export function parseEnvelope(content: Buffer): EventEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch (err) {
    throw new InvalidEnvelopeError(`message body is not JSON: ${(err as Error).message}`);
  }
  assertEnvelope(value);
  return value;
}
