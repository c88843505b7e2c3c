import { DomainError } from '@sched/contracts';
import { BrokerUnavailableError, inspectDeadLetters, replayDeadLetters, serviceQueueNames, type Broker } from '@sched/messaging';
import type { DeadLetterTools } from '../domain/dead-letter-queues';

// The messaging tools report a queue the broker does not know with this wording.
const MISSING_QUEUE = /does not exist/;

/** decisions.md §2: the request cannot be served without RabbitMQ → 503 service_unavailable (Retry-After from sendError). */
function brokerDown(err: unknown): never {
  if (err instanceof BrokerUnavailableError) throw new DomainError('service_unavailable', { message: 'The message broker is unavailable; try again later.' });
  throw err;
}

/** The admin API's view of the DLQs, over @sched/messaging's inspectDeadLetters and replayDeadLetters. */
export function createDeadLetterTools(broker: Broker): DeadLetterTools {
  return {
    dlqName: (service) => serviceQueueNames(broker.names.prefix, service, []).dlq,
    async inspect(service, limit) {
      try {
        const report = await inspectDeadLetters(broker, service, { limit });
        return { count: report.count, oldest: report.oldest };
      } catch (err) {
        if (err instanceof Error && MISSING_QUEUE.test(err.message)) return null;
        return brokerDown(err);
      }
    },
    async replay(service, max) {
      try {
        return await replayDeadLetters(broker, service, max === undefined ? {} : { max });
      } catch (err) {
        if (err instanceof Error && MISSING_QUEUE.test(err.message)) return null;
        return brokerDown(err);
      }
    },
  };
}
