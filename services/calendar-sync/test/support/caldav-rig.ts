import { createTestDatabase, startRadicale, testAmqp, type TestDatabase, type TestRadicale } from '@sched/testing';
import type { SetupOptions } from '../../src/app';
import { call, cleanupBroker, startAvailabilityStub, startCalendarSync, startPublisher, type RunningCalendarSync } from './harness';

/**
 * The rig of the booking.* write tests (event-writes, sync-recovery, write-crash-windows): a fresh database,
 * Radicale with the user alice, the availability stub, one calendar-sync instance (its write retries at
 * `retryDelays`) and a publisher of booking.* messages, on a test prefix of their own.
 */
export interface CalDavRig {
  db: TestDatabase;
  radicale: TestRadicale;
  availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
  svc: RunningCalendarSync;
  publisher: Awaited<ReturnType<typeof startPublisher>>;
  /** A new host of the workspace, its calendar a new calendar `calendar` of alice's, connected over the admin API. */
  connectedHost(calendar: string): Promise<string>;
  /** Stops and removes everything the rig started (the publisher and the service first). */
  close(): Promise<void>;
}

export interface CalDavRigOptions {
  /** The workspace the hosts are added to. */
  ws: string;
  /** alice's password on Radicale. */
  password: string;
  /** CALENDAR_WRITE_RETRY_DELAYS_MS, also the retry queues removed at the end. */
  retryDelays: number[];
  /** More of the service's environment. */
  env?: Record<string, string>;
  /** setupCalendarSync's options (a wrapped provider, say). */
  setup?: SetupOptions;
}

export async function startCalDavRig(opts: CalDavRigOptions): Promise<CalDavRig> {
  const amqp = testAmqp();
  const started: Partial<Omit<CalDavRig, 'connectedHost' | 'close'>> = {};
  const close = async () => {
    await started.publisher?.broker.close();
    await started.svc?.stop();
    await Promise.all([started.radicale?.close(), started.availability?.close()]);
    await cleanupBroker(amqp, opts.retryDelays);
    await started.db?.drop();
  };
  try {
    [started.db, started.radicale, started.availability] = await Promise.all([
      createTestDatabase({ services: ['calendar-sync'] }),
      startRadicale({ users: { alice: opts.password } }),
      startAvailabilityStub(),
    ]);
    started.svc = await startCalendarSync({
      db: started.db,
      amqp,
      availabilityUrl: started.availability.url,
      env: { CALENDAR_WRITE_RETRY_DELAYS_MS: opts.retryDelays.join(','), ...opts.env },
      ...(opts.setup ? { setup: opts.setup } : {}),
    });
    started.publisher = await startPublisher(amqp);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  const { db, radicale, availability, svc, publisher } = started as Required<typeof started>;
  return {
    db,
    radicale,
    availability,
    svc,
    publisher,
    async connectedHost(calendar) {
      const host = availability.addHost(opts.ws);
      await radicale.makeCalendar('alice', calendar);
      const res = await call(svc.url, 'PUT', `/admin/v1/workspaces/${opts.ws}/hosts/${host.id}/calendar`, {
        provider: 'caldav',
        url: radicale.url,
        username: 'alice',
        password: opts.password,
        calendar_url: `${radicale.url}/alice/${calendar}/`,
      });
      expect(res.status).toBe(201);
      return host.id;
    },
    close,
  };
}
