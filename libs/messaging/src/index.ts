export {
  createBroker,
  BrokerUnavailableError,
  type Broker,
  type BrokerOptions,
  type MessagingLogger,
} from './broker';
export {
  createEnvelope,
  parseEnvelope,
  assertEnvelope,
  InvalidEnvelopeError,
  type EventEnvelope,
  type NewEnvelope,
} from './envelope';
export {
  EVENTS_EXCHANGE,
  DEAD_LETTER_EXCHANGE,
  DEFAULT_RETRY_DELAYS_MS,
  topologyNames,
  serviceQueueNames,
  isRoutingKeyOf,
  qualifiedBindingKey,
  serviceBindingKeys,
  type TopologyNames,
  type ServiceQueueNames,
} from './topology';
export { HEADERS } from './message-headers';
export {
  outboxTable,
  enqueueEvent,
  enqueueEventSql,
  outboxChannel,
  outboxSchemaName,
  outboxNotifyPayload,
  parseOutboxNotifyPayload,
  outboxRetentionRule,
  outboxRoutingKeyRule,
  type OutboxTable,
  type OutboxTableOptions,
  type RoutingKeyRule,
} from './outbox-table';
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from './outbox-relay';
export { inboxTable, inboxRetentionRule, type InboxTable } from './inbox-table';
export { startConsumer, type Consumer, type ConsumerOptions, type EventHandler, type DeliveryInfo, type IdempotentOptions } from './consumer';
export {
  inspectDeadLetters,
  replayDeadLetters,
  type DeadLetterReport,
  type DeadLetterSummary,
  type ReplayOptions,
} from './dead-letters';
export type { AnyPgDatabase, TxOf } from './db-types';
export { createDeadLetterPublisher, type DeadLetterPublisher, type DeadLetterDetails } from './dead-letter-publisher';
