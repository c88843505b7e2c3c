import { sql } from 'drizzle-orm';
import { createBroker, type Broker, type Consumer } from '../../src';
import { AMQP_URL, capturingLogger, deleteTopology, randomPrefix } from './amqp-test-kit';
import { createTestDatabase, type ServiceTables, type TestDatabase, type TestDb } from './test-database';

/** The retry delays of every consumer the consumer tests start (their queues are deleted with them). */
export const RETRY_DELAYS = [50, 100];

/** The transaction a handler gets from the test database. */
export type Tx = Parameters<Parameters<TestDb['transaction']>[0]>[0];

export interface ConsumerRig {
  /** At debug level: the tests wait for the consumer's 'event handled' / 'duplicate event skipped' lines. */
  logger: ReturnType<typeof capturingLogger>['logger'];
  lines: string[];
  /** Every service a test declares, pushed by the test: their queues are deleted after the file. */
  services: string[];
  /** Every consumer a test starts, pushed by the test: stopped after each test. */
  consumers: Consumer[];
  /** The test database, exchange prefix and broker of the file, set before its first test. */
  readonly tdb: TestDatabase;
  readonly prefix: string;
  readonly broker: Broker;
  effects(tables: ServiceTables): Promise<Array<{ eventId: string; note: string | null }>>;
  inboxCount(tables: ServiceTables): Promise<number>;
}

/**
 * The setup of the consumer tests (consumer.test.ts, consumer-batch.test.ts), as Jest hooks: before all, a
 * throwaway database, an exchange prefix and a broker named `brokerName`; after each test, its consumers
 * stopped; after all, the broker closed, the services' topology deleted and the database dropped.
 */
export function useConsumerRig(brokerName: string): ConsumerRig {
  const { logger, lines } = capturingLogger();
  const services: string[] = [];
  const consumers: Consumer[] = [];
  let tdb: TestDatabase | undefined;
  let prefix: string | undefined;
  let broker: Broker | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the consumer rig is used before its beforeAll ran');
    return value;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    prefix = randomPrefix();
    broker = createBroker({ url: AMQP_URL, prefix, logger, name: brokerName });
    await broker.waitForConnection();
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
  });

  afterAll(async () => {
    await broker!.close();
    await deleteTopology(prefix!, services.map((service) => ({ service, retryDelaysMs: RETRY_DELAYS })));
    await tdb!.drop();
  });

  return {
    logger,
    lines,
    services,
    consumers,
    get tdb() {
      return started(tdb);
    },
    get prefix() {
      return started(prefix);
    },
    get broker() {
      return started(broker);
    },
    async effects(tables) {
      return started(tdb).db.select({ eventId: tables.effects.eventId, note: tables.effects.note }).from(tables.effects);
    },
    async inboxCount(tables) {
      const [row] = await started(tdb).db.select({ n: sql<number>`count(*)::int` }).from(tables.inbox);
      return row!.n;
    },
  };
}
