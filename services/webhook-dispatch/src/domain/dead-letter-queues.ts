import { DomainError } from '@sched/contracts';

/**
 * Services that consume events and so own a `<service>.dlq` (architecture.md); the gateway consumes
 * nothing and has none. The admin API of decisions.md §13 lives here because on-call recovery of
 * deliveries and of queues belongs together.
 */
export const DEAD_LETTER_SERVICES = ['booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch'] as const;
export type DeadLetterService = (typeof DEAD_LETTER_SERVICES)[number];

/** `booking` or `booking.dlq` name the same queue; anything else is 404. */
export function resolveDeadLetterService(name: string): DeadLetterService {
  const service = name.endsWith('.dlq') ? name.slice(0, -'.dlq'.length) : name;
  const found = DEAD_LETTER_SERVICES.find((s) => s === service);
  if (!found) throw new DomainError('not_found');
  return found;
}

export interface DeadLetterMessageView {
  id: string | null;
  type: string | null;
  routing_key: string;
  first_failed_at: string | null;
  last_error: string | null;
  attempts: number;
}

export interface DeadLetterQueueView {
  service: DeadLetterService;
  queue: string;
  available: boolean;
  count: number;
  oldest: DeadLetterMessageView[];
}

/** The broker side, implemented over @sched/messaging's inspectDeadLetters / replayDeadLetters. */
export interface DeadLetterTools {
  dlqName(service: DeadLetterService): string;
  /** Null when the queue does not exist (the service never started on this broker). */
  inspect(service: DeadLetterService, limit: number): Promise<{ count: number; oldest: DeadLetterMessageView[] } | null>;
  /** Null when the service's queue or DLQ does not exist. */
  replay(service: DeadLetterService, max: number | undefined): Promise<number | null>;
}

export async function inspectAllDeadLetters(tools: DeadLetterTools, limit: number): Promise<DeadLetterQueueView[]> {
  // One at a time: each peek holds its messages on a private channel until it nacks them.
  const out: DeadLetterQueueView[] = [];
  for (const service of DEAD_LETTER_SERVICES) {
    const report = await tools.inspect(service, limit);
    out.push({ service, queue: tools.dlqName(service), available: report !== null, count: report?.count ?? 0, oldest: report?.oldest ?? [] });
  }
  return out;
}

export async function replayServiceDeadLetters(
  tools: DeadLetterTools,
  name: string,
  max: number | undefined,
): Promise<{ service: DeadLetterService; queue: string; replayed: number }> {
  const service = resolveDeadLetterService(name);
  const replayed = await tools.replay(service, max);
  if (replayed === null) throw new DomainError('not_found', { message: 'The queue does not exist on the broker yet.' });
  return { service, queue: tools.dlqName(service), replayed };
}
