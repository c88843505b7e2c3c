import { createTestDatabase, testAmqp, type TestAmqp, type TestDatabase } from '@sched/testing';
import { cleanupBroker, FAST_POLL, startDispatch, startPublisher, type DispatchUnderTest, type Publisher, type receiverPool } from './dispatch-harness';

/**
 * One webhook-dispatch instance with the fast poll (FAST_POLL) on a fresh database and test prefix, and a
 * publisher of public events on that prefix: the setup of batching.test.ts and dead-letters.test.ts.
 */
export interface DispatchRig {
  db: TestDatabase;
  amqp: TestAmqp;
  svc: DispatchUnderTest;
  pub: Publisher;
  /** Stops the service and the publisher, closes the receivers, removes the queues and drops the database. */
  close(): Promise<void>;
}

export interface DispatchRigOptions {
  /** The file's receivers, closed with the rig. */
  receivers: ReturnType<typeof receiverPool>;
  /** Queues of other services the file makes under its prefix, removed with webhook-dispatch's (cleanupBroker). */
  otherServices?: Array<{ service: string; retryDelaysMs?: readonly number[] }>;
}

export async function startDispatchRig(opts: DispatchRigOptions): Promise<DispatchRig> {
  const started: Partial<Omit<DispatchRig, 'close'>> = {};
  const close = async () => {
    await started.svc?.stop();
    await started.pub?.close();
    await opts.receivers.closeAll();
    if (started.amqp) await cleanupBroker(started.amqp, opts.otherServices);
    await started.db?.drop();
  };
  try {
    started.db = await createTestDatabase({ services: ['webhook-dispatch'] });
    started.amqp = testAmqp();
    started.svc = await startDispatch(started.db, started.amqp, FAST_POLL);
    started.pub = await startPublisher(started.amqp);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  const { db, amqp, svc, pub } = started as Required<typeof started>;
  return { db, amqp, svc, pub, close };
}
