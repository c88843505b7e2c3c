import {
  createBroker,
  createEnvelope,
  HEADERS,
  inspectDeadLetters,
  qualifiedBindingKey,
  replayDeadLetters,
  serviceBindingKeys,
  startConsumer,
  topologyNames,
  type Broker,
  type Consumer,
  type EventEnvelope,
} from '../src';
import { AMQP_URL, capturingLogger, deleteTopology, eventually, randomPrefix, rawConnection } from './helpers/amqp-test-kit';
import { createServiceTables, createTestDatabase, type TestDatabase } from './helpers/test-database';

// Routing keys with qualifiers (README "Routing keys"), against a real RabbitMQ topic exchange.
const { logger } = capturingLogger();
const RETRY_DELAYS = [50];
const services: string[] = [];
let tdb: TestDatabase;
let prefix: string;
let broker: Broker;
const consumers: Consumer[] = [];

const created = (n: number): EventEnvelope => createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data: { n } });

/** Asserts the service's topology the way the consumer does on start, then stops consuming: what the exchange routes waits in the queue, to be counted. */
async function declaredQueue(service: string, bindings: string[], exactBindings?: string[]): Promise<string> {
  services.push(service);
  const tables = await createServiceTables(tdb.pool, service.replace(/-/g, '_'));
  const c = startConsumer({ broker, db: tdb.db, inbox: tables.inbox, service, bindings, exactBindings, handler: async () => undefined, retryDelaysMs: RETRY_DELAYS, logger });
  await c.ready();
  await c.stop();
  return c.queues.queue;
}

/** The routing keys of the messages waiting in `queue`, taken off it. */
async function drain(queue: string): Promise<string[]> {
  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    const keys: string[] = [];
    for (;;) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) return keys;
      keys.push(m.fields.routingKey);
    }
  } finally {
    await conn.close();
  }
}

/** One event per key, of the type the key's first two words name. */
async function publishUnder(keys: string[]): Promise<void> {
  for (const [i, key] of keys.entries()) {
    await broker.publish(createEnvelope({ type: key.split('.').slice(0, 2).join('.'), workspace_id: 'ws_1', data: { n: i } }), key);
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = randomPrefix();
  broker = createBroker({ url: AMQP_URL, prefix, logger, name: 'routing-test' });
  await broker.waitForConnection();
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
});

afterAll(async () => {
  await broker.close();
  await deleteTopology(prefix, services.map((service) => ({ service, retryDelaysMs: RETRY_DELAYS })));
  await tdb.drop();
});

test('binding keys: a type is bound with its qualifiers, a pattern ending in # as it is, exact bindings as given', () => {
  expect(qualifiedBindingKey('booking.created')).toBe('booking.created.#');
  expect(qualifiedBindingKey('calendar.*')).toBe('calendar.*.#');
  expect(qualifiedBindingKey('booking.#')).toBe('booking.#');
  expect(qualifiedBindingKey('#')).toBe('#');
  expect(serviceBindingKeys(['booking.created.invitation'], ['booking.created'])).toEqual(['booking.created.invitation.#', 'booking.created']);
});

test('a queue binding a type receives it with and without qualifiers, each once, also beside the bare binding a former version left', async () => {
  const queue = await declaredQueue('every-created', ['booking.created', 'booking.cancelled']);
  // A queue made by a version before qualifiers keeps its bare binding (the assertion only adds): both match the bare key.
  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    await ch.bindQueue(queue, topologyNames(prefix).events, 'booking.created');
  } finally {
    await conn.close();
  }
  await publishUnder(['booking.created', 'booking.created.invitation', 'booking.created.no_invitation', 'booking.rescheduled', 'booking.createdx']);
  expect(await drain(queue)).toEqual(['booking.created', 'booking.created.invitation', 'booking.created.no_invitation']);
});

test('a queue binding a qualified key plus the bare key exactly never receives the other qualifier', async () => {
  const queue = await declaredQueue('only-invitations', ['booking.created.invitation'], ['booking.created']);
  const keys: string[] = [];
  for (let i = 0; i < 100; i++) keys.push('booking.created.no_invitation');
  keys.push('booking.created.invitation', 'booking.created');
  await publishUnder(keys);
  expect(await drain(queue)).toEqual(['booking.created.invitation', 'booking.created']);
});

test('dead-lettering and replay keep the qualified routing key, and the replay reaches the service queue again', async () => {
  services.push('replayed');
  const tables = await createServiceTables(tdb.pool, 'replayed');
  let calls = 0;
  const c = startConsumer({
    broker,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'replayed',
    bindings: ['booking.created.invitation'],
    handler: async () => {
      calls += 1;
      throw new Error('broken');
    },
    retryDelaysMs: RETRY_DELAYS,
    logger,
  });
  consumers.push(c);
  await c.ready();
  const e = created(1);
  await broker.publish(e, 'booking.created.invitation');
  await eventually(async () => (await inspectDeadLetters(broker, 'replayed')).count === 1, 5000, 'the dead letter');
  expect(calls).toBe(2);
  expect((await inspectDeadLetters(broker, 'replayed')).oldest[0]).toMatchObject({ id: e.id, type: 'booking.created', routing_key: 'booking.created.invitation', attempts: 2 });

  expect(await replayDeadLetters(broker, 'replayed')).toBe(1);
  // Handled again (first attempt and its retry), failed again, dead-lettered again: under the same key.
  await eventually(async () => calls === 4 && (await inspectDeadLetters(broker, 'replayed')).count === 1, 5000, 'the replayed dead letter');
  const [letter] = (await inspectDeadLetters(broker, 'replayed')).oldest;
  expect(letter).toMatchObject({ id: e.id, routing_key: 'booking.created.invitation', attempts: 2 });
  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    const m = await ch.get(`${prefix}replayed.dlq`, { noAck: false });
    expect(m && m.properties.headers).toMatchObject({ [HEADERS.originalRoutingKey]: 'booking.created.invitation', [HEADERS.replays]: 1 });
  } finally {
    await conn.close();
  }
});
